import TandemCore
import TandemCrypto

/// A provider's signing keys (RFC 7517 JWK Set, from the discovery document's `jwks_uri`):
/// the RSA and P-256 keys usable for `RS256` and `ES256`. Other keys (encryption keys, other
/// curves and types) are skipped, not refused, so one odd key does not break a provider.
struct JSONWebKeySet: Sendable {
    struct Key: Sendable, Equatable {
        var kid: String?
        /// `RSA` or `EC` (P-256 only).
        var kty: String
        /// The JWK's `alg`, when it names one: the key is used for that algorithm only.
        var alg: String?
        /// RSA: modulus and exponent; EC: the point's coordinates (big-endian bytes).
        var n: [UInt8] = [], e: [UInt8] = [], x: [UInt8] = [], y: [UInt8] = []

        /// Whether the key can check a signature of `algorithm`.
        func fits(_ algorithm: String) -> Bool {
            guard alg == nil || alg == algorithm else { return false }
            switch algorithm {
            case "RS256": return kty == "RSA"
            case "ES256": return kty == "EC"
            default: return false
            }
        }

        /// Whether `signature` over `input` verifies with this key; false for a key that is unusable.
        func verifies(_ signature: [UInt8], of input: [UInt8], algorithm: String) -> Bool {
            switch algorithm {
            case "RS256": return (try? JWSSignature.isValidRS256(signature, of: input, modulus: n, exponent: e)) ?? false
            case "ES256": return (try? JWSSignature.isValidES256(signature, of: input, x: x, y: y)) ?? false
            default: return false
            }
        }
    }

    var keys: [Key]

    init(keys: [Key]) { self.keys = keys }

    /// Reads `{"keys": [...]}`.
    /// - Throws: `IDTokenError.provider` when the document is not a JWK Set.
    init(json bytes: [UInt8]) throws(IDTokenError) {
        guard case .object(let document)? = try? JSONParser.parse(bytes), case .array(let list)? = document["keys"] else {
            throw .provider("the provider's jwks_uri did not answer a JWK Set ({\"keys\": [...]})")
        }
        keys = list.compactMap { value -> Key? in
            guard case .object(let o) = value, case .string(let kty)? = o["kty"] else { return nil }
            if case .string(let use)? = o["use"], use != "sig" { return nil }
            func text(_ name: String) -> String? { if case .string(let s)? = o[name] { return s } else { return nil } }
            func bytes(_ name: String) -> [UInt8]? { text(name).flatMap { Base64URL.decode($0) } }
            var key = Key(kid: text("kid"), kty: kty, alg: text("alg"))
            switch kty {
            case "RSA":
                guard let n = bytes("n"), let e = bytes("e") else { return nil }
                key.n = n
                key.e = e
            case "EC":
                guard text("crv") == "P-256", let x = bytes("x"), let y = bytes("y") else { return nil }
                key.x = x
                key.y = y
            default:
                return nil
            }
            return key
        }
    }

    /// The key a token's header names for `algorithm`: by `kid`; a header without `kid` is
    /// accepted only when exactly one key fits the algorithm (RFC 7515 §4.1.4 leaves `kid` optional).
    func key(kid: String?, algorithm: String) -> Key? {
        let fitting = keys.filter { $0.fits(algorithm) }
        if let kid { return fitting.first { $0.kid == kid } }
        return fitting.count == 1 ? fitting[0] : nil
    }
}
