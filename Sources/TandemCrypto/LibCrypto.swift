import CCrypto

/// Process-wide setup of OpenSSL's libcrypto.
///
/// libcrypto normally registers an `atexit` handler, `OPENSSL_cleanup`, that frees its global
/// and per-thread state when the process exits. A thread that used libcrypto frees its own
/// per-thread state as it ends; if it ends while the main thread is already in `exit`, both free
/// the same memory. `tandem user add` hit exactly this (its SQLite writer thread, which draws
/// the new record name from `RAND_bytes`, was ending as `main` returned):
/// `malloc_consolidate(): invalid chunk size`, or a double free in `OPENSSL_cleanup` under
/// AddressSanitizer, about once in a thousand runs.
/// `OPENSSL_INIT_NO_ATEXIT` (OpenSSL 3, `OPENSSL_init_crypto(3)`) skips that handler; the
/// operating system reclaims the memory anyway.
public enum LibCrypto {
    private static let initialized: Void = {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }()

    /// Initializes libcrypto without its exit-time cleanup. Call it first thing in `main`:
    /// it only takes effect before anything else in the process initializes libcrypto. Every
    /// entry point of this module calls it too. Idempotent and thread-safe.
    public static func initialize() {
        _ = initialized
    }
}
