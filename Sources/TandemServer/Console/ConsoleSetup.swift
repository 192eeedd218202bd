import TandemCore
import TandemCrypto
import TandemStore

/// The first-run setup code (decisions C2): when a server starts on a data directory with no
/// administrator, it makes a random 256-bit code and prints `…/console/setup?code=…` once to its
/// terminal. Whoever holds the code may create the first administrator at `/console/setup`; the
/// code works once, only while no administrator exists, and only in this process (a restart
/// prints a new one). Only its SHA-256 is kept.
final class ConsoleSetup: Sendable {
    private let codeHash = Locked<[UInt8]?>(nil)

    init() {}

    /// A new code when the store has no administrator; nil otherwise.
    func open(store: any Store) throws -> String? {
        guard try !store.read({ try $0.hasServerAdmin() }) else { return nil }
        let code = Tokens.random(prefix: "")
        codeHash.withLock { $0 = Digest.sha256(Array(code.utf8)) }
        return code
    }

    /// Whether a code is waiting to be used.
    var isOpen: Bool { codeHash.withLock { $0 != nil } }

    /// Whether `code` is the waiting code (constant-time comparison of hashes).
    func matches(_ code: String) -> Bool {
        let hash = Digest.sha256(Array(code.utf8))
        return codeHash.withLock { $0.map { Digest.equal($0, hash) } ?? false }
    }

    /// Uses the code: true once, for the first caller holding it.
    func consume(_ code: String) -> Bool {
        let hash = Digest.sha256(Array(code.utf8))
        return codeHash.withLock { stored in
            guard let current = stored, Digest.equal(current, hash) else { return false }
            stored = nil
            return true
        }
    }

    /// Puts a consumed code back (the step after it failed, nothing was written).
    func restore(_ code: String) {
        codeHash.withLock { $0 = Digest.sha256(Array(code.utf8)) }
    }
}
