import CCrypto

/// ECDSA over NIST P-256 with SHA-256, from OpenSSL's libcrypto: the device keys of identity
/// proofs (D24). Public keys travel as the uncompressed X9.63 point (65 bytes, `0x04 ‖ X ‖ Y`);
/// signatures as DER (`ECDSA-Sig-Value`, 70–72 bytes).
public enum P256 {
    /// Length of an uncompressed X9.63 public key.
    public static let publicKeyLength = 65

    /// DER SubjectPublicKeyInfo prefix of an uncompressed P-256 key (id-ecPublicKey, prime256v1,
    /// BIT STRING of 66 bytes): prefix ‖ 65-byte point is the whole SPKI OpenSSL reads.
    static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
        0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// A P-256 private key held by a device.
    public final class PrivateKey: @unchecked Sendable {
        // Immutable after init; libcrypto's EVP_PKEY is safe to use from several threads for signing.
        let key: OpaquePointer

        /// A new random key.
        public init() throws(P256Error) {
            LibCrypto.initialize()
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_name") }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
                  EVP_PKEY_generate(context, &key) == 1, let key else { throw .openSSL("EVP_PKEY_generate") }
            self.key = key
        }

        /// Reads a key written by `derRepresentation`.
        /// - Throws: `P256Error.invalidKey` when the bytes are not a P-256 private key.
        public init(derRepresentation der: [UInt8]) throws(P256Error) {
            LibCrypto.initialize()
            let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
            }
            guard let parsed else { throw .invalidKey }
            guard EVP_PKEY_get_bits(parsed) == 256, EVP_PKEY_is_a(parsed, "EC") == 1 else {
                EVP_PKEY_free(parsed)
                throw .invalidKey
            }
            key = parsed
        }

        deinit { EVP_PKEY_free(key) }

        /// The private key as DER, for the device to keep (a file readable by its user only).
        public var derRepresentation: [UInt8] {
            var out: UnsafeMutablePointer<UInt8>?
            let length = i2d_PrivateKey(key, &out)
            guard length > 0, let out else { return [] }
            defer { CRYPTO_free(out, #fileID, #line) }
            return Array(UnsafeBufferPointer(start: out, count: Int(length)))
        }

        /// The uncompressed X9.63 public key (65 bytes).
        public var publicKey: [UInt8] {
            var out: UnsafeMutablePointer<UInt8>?
            let length = i2d_PUBKEY(key, &out)
            guard length > 0, let out else { return [] }
            defer { CRYPTO_free(out, #fileID, #line) }
            let spki = Array(UnsafeBufferPointer(start: out, count: Int(length)))
            return Array(spki.suffix(P256.publicKeyLength))
        }

        /// ECDSA P-256 / SHA-256 signature of `message`, DER encoded.
        public func signature(for message: [UInt8]) throws(P256Error) -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw .openSSL("EVP_DigestSignInit") }
            var length = 0
            guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else { throw .openSSL("EVP_DigestSign") }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else { throw .openSSL("EVP_DigestSign") }
            return Array(signature.prefix(length))
        }
    }

    /// Whether `signature` (DER) is a valid ECDSA P-256 / SHA-256 signature of `message` by the
    /// holder of `publicKey` (uncompressed X9.63, 65 bytes).
    /// - Throws: `P256Error.invalidKey` when `publicKey` is not a point on the curve.
    public static func isValidSignature(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) throws(P256Error) -> Bool {
        LibCrypto.initialize()
        guard let key = parsePublicKey(publicKey) else { throw .invalidKey }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw .openSSL("EVP_DigestVerifyInit") }
        let result = EVP_DigestVerify(context, signature, signature.count, message, message.count)
        ERR_clear_error()
        return result == 1
    }
}

/// Why a P-256 operation failed.
public enum P256Error: Error, Equatable, Sendable {
    /// The bytes are not a P-256 key (public: not a 65-byte uncompressed point on the curve).
    case invalidKey
    /// A libcrypto call failed (named).
    case openSSL(String)
}

extension P256 {
    /// Whether `publicKey` is an uncompressed X9.63 point on P-256 (65 bytes, `0x04 ‖ X ‖ Y`).
    public static func isValidPublicKey(_ publicKey: [UInt8]) -> Bool {
        LibCrypto.initialize()
        guard let key = parsePublicKey(publicKey) else { return false }
        EVP_PKEY_free(key)
        return true
    }

    /// The EVP key of an uncompressed X9.63 point (the caller frees it), or nil when the bytes
    /// are not a point on P-256.
    static func parsePublicKey(_ publicKey: [UInt8]) -> OpaquePointer? {
        guard publicKey.count == publicKeyLength, publicKey.first == 0x04 else { return nil }
        let spki = spkiPrefix + publicKey
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        if key == nil { ERR_clear_error() }
        return key
    }
}

extension P256 {
    /// The uncompressed X9.63 point of a DER SubjectPublicKeyInfo holding an uncompressed P-256
    /// key (what `openssl ec -pubout` writes inside its PEM armour), or nil when the bytes are
    /// anything else (another curve, a compressed point, a point not on the curve).
    public static func publicKey(subjectPublicKeyInfo der: [UInt8]) -> [UInt8]? {
        guard der.count == spkiPrefix.count + publicKeyLength, Array(der.prefix(spkiPrefix.count)) == spkiPrefix else { return nil }
        let point = Array(der.suffix(publicKeyLength))
        return isValidPublicKey(point) ? point : nil
    }
}
