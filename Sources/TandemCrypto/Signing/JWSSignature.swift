import CCrypto

/// The two JSON Web Signature algorithms an OpenID Connect ID token is checked with (RFC 7518
/// §3.3 and §3.4), verified by libcrypto from the public key as a JWK carries it.
public enum JWSSignature {
    /// Smallest RSA modulus accepted, in bits (RFC 7518 §3.3: 2048 or larger).
    public static let minimumRSABits = 2048
    /// Largest RSA modulus accepted, in bits (bounds the work a hostile key can cause).
    public static let maximumRSABits = 8192

    /// Whether `signature` is an RSASSA-PKCS1-v1_5 / SHA-256 signature (`RS256`) of `message`
    /// by the RSA key with modulus `modulus` and public exponent `exponent` (big-endian bytes, as
    /// a JWK's `n` and `e` decode to).
    /// - Throws: `JWSSignatureError.invalidKey` when the key is not a usable RSA public key (a
    ///   modulus outside 2048–8192 bits, an even or tiny exponent).
    public static func isValidRS256(_ signature: [UInt8], of message: [UInt8], modulus: [UInt8], exponent: [UInt8]) throws(JWSSignatureError) -> Bool {
        LibCrypto.initialize()
        let n = Array(modulus.drop { $0 == 0 })
        let e = Array(exponent.drop { $0 == 0 })
        let bits = n.isEmpty ? 0 : n.count * 8 - n[0].leadingZeroBitCount
        guard (minimumRSABits...maximumRSABits).contains(bits), !e.isEmpty, e.count <= 8, e.last! & 1 == 1,
              e.count > 1 || e[0] >= 3 else { throw .invalidKey }
        guard let key = rsaKey(n: n, e: e) else { throw .invalidKey }
        defer { EVP_PKEY_free(key) }
        return verify(key, signature, message)
    }

    /// Whether `signature` is an `ES256` signature of `message` (ECDSA P-256 / SHA-256) by the key
    /// at point (`x`, `y`), 32 bytes each. JWS carries the signature as `r ‖ s` (64 bytes, RFC
    /// 7518 §3.4), not DER; a signature of any other length is not valid.
    /// - Throws: `JWSSignatureError.invalidKey` when (`x`, `y`) is not a point on P-256.
    public static func isValidES256(_ signature: [UInt8], of message: [UInt8], x: [UInt8], y: [UInt8]) throws(JWSSignatureError) -> Bool {
        LibCrypto.initialize()
        guard x.count == 32, y.count == 32, let key = P256.parsePublicKey([0x04] + x + y) else { throw .invalidKey }
        defer { EVP_PKEY_free(key) }
        guard signature.count == 64, let der = derSignature(raw: signature) else { return false }
        return verify(key, der, message)
    }

    /// A DER `ECDSA-Sig-Value` as JWS's `r ‖ s` (32 bytes each), or nil when it is not one.
    /// For tests and signers: `P256.PrivateKey.signature(for:)` answers DER.
    public static func rawSignature(der: [UInt8]) -> [UInt8]? {
        LibCrypto.initialize()
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { ERR_clear_error(); return nil }
        defer { ECDSA_SIG_free(parsed) }
        var raw = [UInt8](repeating: 0, count: 64)
        let ok = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(ECDSA_SIG_get0_r(parsed), buffer.baseAddress, 32) == 32
                && BN_bn2binpad(ECDSA_SIG_get0_s(parsed), buffer.baseAddress! + 32, 32) == 32
        }
        return ok ? raw : nil
    }

    /// `r ‖ s` as DER, for `EVP_DigestVerify`.
    static func derSignature(raw: [UInt8]) -> [UInt8]? {
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = BN_bin2bn(raw, 32, nil)
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &out)
        guard length > 0, let out else { return nil }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The RSA public key (n, e) as an EVP key (the caller frees it).
    static func rsaKey(n: [UInt8], e: [UInt8]) -> OpaquePointer? {
        // The builder keeps the parameter names' pointers until `to_param`: they must outlive it.
        "n".withCString { nName in
            "e".withCString { eName in rsaKey(n: n, e: e, nName: nName, eName: eName) }
        }
    }

    private static func rsaKey(n: [UInt8], e: [UInt8], nName: UnsafePointer<CChar>, eName: UnsafePointer<CChar>) -> OpaquePointer? {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        let nBN = BN_bin2bn(n, Int32(n.count), nil)
        let eBN = BN_bin2bn(e, Int32(e.count), nil)
        defer {
            BN_free(nBN)
            BN_free(eBN)
        }
        guard let nBN, let eBN, OSSL_PARAM_BLD_push_BN(builder, nName, nBN) == 1, OSSL_PARAM_BLD_push_BN(builder, eName, eBN) == 1,
              let params = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        // EVP_PKEY_PUBLIC_KEY: OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_ALL_PARAMETERS (evp.h).
        let publicKeySelection: Int32 = 0x02 | 0x04 | 0x80
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, publicKeySelection, params) == 1 else {
            ERR_clear_error()
            return nil
        }
        return key
    }

    /// SHA-256 digest-verify with the key's default padding (PKCS#1 v1.5 for RSA).
    static func verify(_ key: OpaquePointer, _ signature: [UInt8], _ message: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { ERR_clear_error(); return false }
        let result = EVP_DigestVerify(context, signature, signature.count, message, message.count)
        ERR_clear_error()
        return result == 1
    }
}

/// Why a JWS signature could not be checked.
public enum JWSSignatureError: Error, Equatable, Sendable {
    /// The public key is unusable for the algorithm.
    case invalidKey
}
