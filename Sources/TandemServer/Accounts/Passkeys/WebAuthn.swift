import Foundation
import TandemCore
import TandemCrypto

/// Who passkeys are made for (WebAuthn Level 2 §5.4.2): the RP ID, a domain the authenticator
/// scopes credentials to, and the one origin whose pages may use them (decision A25).
struct PasskeyRelyingParty: Sendable, Hashable {
    /// A domain: the origin's host or a parent of it (`example.com` for `https://id.example.com`).
    var id: String
    /// `scheme://host[:port]`, as browsers write it in clientDataJSON.
    var origin: String

    /// The relying party of a server reached at `baseURL` (`--public-url`, or the request's Host),
    /// with `--rp-id` when set, else the host of `baseURL`.
    /// - Throws: `BAD_REQUEST` when the host is an IP address (WebAuthn needs a domain) or the RP
    ///   ID is not the host or a parent domain of it.
    init(baseURL: String, rpID: String?) throws {
        guard let origin = Origins.origin(ofURL: baseURL), let host = Self.host(ofOrigin: origin) else {
            throw CloudKitError.badRequest("passkeys need the server's URL to be http(s)://host[:port]")
        }
        if host.allSatisfy({ $0.isNumber || $0 == "." }) || host.hasPrefix("[") {
            throw CloudKitError.badRequest("passkeys need a domain name, not an IP address: open this page at http://localhost:PORT, or start the server with --public-url https://your.domain")
        }
        let id = (rpID ?? host).lowercased()
        guard host == id || host.hasSuffix("." + id) else {
            throw CloudKitError.badRequest("the passkey RP ID '\(id)' is neither the server's host '\(host)' nor a parent domain of it")
        }
        self.id = id
        self.origin = origin
    }

    init(id: String, origin: String) {
        self.id = id
        self.origin = origin
    }

    static func host(ofOrigin origin: String) -> String? {
        guard let schemeEnd = origin.range(of: "://") else { return nil }
        let rest = origin[schemeEnd.upperBound...]
        if rest.hasPrefix("[") { return rest.firstIndex(of: "]").map { String(rest[...$0]) } }
        return String(rest.prefix { $0 != ":" }).lowercased()
    }
}

/// A registered passkey: what the server keeps to check its assertions.
struct PasskeyCredential: Sendable, Hashable {
    /// The credential ID the authenticator chose (16–1023 bytes).
    var id: [UInt8]
    /// The ES256 public key as an uncompressed X9.63 point (65 bytes).
    var publicKey: [UInt8]
    /// The authenticator's signature counter at the last use (0 when it keeps none).
    var signCount: UInt32
}

/// Why a passkey registration or assertion is refused. `reason` is what the answer says.
enum WebAuthnError: Error, Equatable, Sendable {
    case malformed(String)
    case wrongType(expected: String)
    case wrongChallenge
    /// Never issued, or used already (a challenge works once).
    case challengeUnknown
    case challengeExpired
    /// Issued to another browser session, app or step.
    case challengeMismatch
    case wrongOrigin(String)
    case wrongRelyingParty
    case userNotPresent
    case userNotVerified
    case unsupportedAlgorithm(Int64)
    case badKey
    case badSignature
    case badAttestation(String)
    case signCountRegressed(stored: UInt32, received: UInt32)
    case unknownCredential
    case credentialRegistered

    var reason: String {
        switch self {
        case .malformed(let what): return "the passkey response is malformed: \(what)"
        case .wrongType(let expected): return "clientDataJSON.type is not '\(expected)'"
        case .wrongChallenge: return "clientDataJSON.challenge is not the challenge issued"
        case .challengeUnknown: return "the passkey challenge is unknown or was used already; start again"
        case .challengeExpired: return "the passkey challenge expired (they last 5 minutes); start again"
        case .challengeMismatch: return "the passkey challenge was issued for another session or step; start again"
        case .wrongOrigin(let origin): return "the passkey was used on origin '\(origin)', not this server's"
        case .wrongRelyingParty: return "the authenticator data is for another RP ID"
        case .userNotPresent: return "the authenticator did not report the user present (UP flag)"
        case .userNotVerified: return "the authenticator did not verify the user (UV flag), which this server requires"
        case .unsupportedAlgorithm(let alg): return "COSE algorithm \(alg) is not supported; only ES256 (-7) is"
        case .badKey: return "the credential public key is not an EC2 P-256 key"
        case .badSignature: return "the passkey signature does not verify"
        case .badAttestation(let what): return "the attestation statement is refused: \(what)"
        case .signCountRegressed(let stored, let received):
            return "the authenticator's signature counter went from \(stored) to \(received): the passkey may have been cloned (WebAuthn §6.1.1)"
        case .unknownCredential: return "this passkey is not registered here"
        case .credentialRegistered: return "this passkey is registered already"
        }
    }

    /// `BAD_REQUEST` for malformed input, `AUTHENTICATION_FAILED` for every refusal.
    var cloudKitError: CloudKitError {
        if case .malformed = self { return CloudKitError.badRequest(reason) }
        return CloudKitError(.authenticationFailed, reason)
    }
}

/// Server-side checks of WebAuthn Level 2 ceremonies for ES256 passkeys: registration (§7.1)
/// and authentication (§7.2). Pure functions of bytes and what the server expects; the caller
/// looks up and consumes the challenge (`PasskeyChallenges`) and stores the credential.
enum WebAuthn {
    /// clientDataJSON longer than this is refused before parsing (browsers send ~200 bytes).
    static let maximumClientDataBytes = 4096
    /// COSE algorithm ES256: ECDSA with P-256 and SHA-256 (RFC 9053).
    static let es256: Int64 = -7

    struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let userPresent = Flags(rawValue: 0x01)
        static let userVerified = Flags(rawValue: 0x04)
        static let attestedCredentialData = Flags(rawValue: 0x40)
        static let extensionData = Flags(rawValue: 0x80)
    }

    /// The members of clientDataJSON the server checks (§5.8.1).
    struct ClientData: Sendable {
        var type: String
        var challenge: [UInt8]
        var origin: String
        var crossOrigin: Bool
    }

    /// Parses clientDataJSON (UTF-8 JSON, at most 4 KiB).
    /// - Throws: `.malformed` when it is not JSON with string `type`, `challenge` (base64url) and `origin`.
    static func clientData(_ json: [UInt8]) throws(WebAuthnError) -> ClientData {
        guard json.count <= maximumClientDataBytes else { throw .malformed("clientDataJSON is over \(maximumClientDataBytes) bytes") }
        guard case .object(let object)? = try? JSONParser.parse(json) else { throw .malformed("clientDataJSON is not a JSON object") }
        guard case .string(let type)? = object["type"], case .string(let encoded)? = object["challenge"],
              let challenge = Base64URL.decode(encoded), case .string(let origin)? = object["origin"] else {
            throw .malformed("clientDataJSON needs string type, challenge (base64url) and origin")
        }
        let crossOrigin = object["crossOrigin"] == .bool(true)
        return ClientData(type: type, challenge: challenge, origin: origin, crossOrigin: crossOrigin)
    }

    /// Authenticator data (§6.1): rpIdHash, flags, counter, and for a registration the attested
    /// credential data (AAGUID, credential ID, COSE public key).
    struct AuthenticatorData: Sendable {
        var rpIDHash: [UInt8]
        var flags: Flags
        var signCount: UInt32
        var credential: PasskeyCredential?

        /// - Throws: `.malformed` for truncated data or trailing bytes; `.unsupportedAlgorithm`
        ///   and `.badKey` for a credential key that is not ES256 on P-256.
        init(_ bytes: [UInt8]) throws(WebAuthnError) {
            guard bytes.count >= 37 else { throw .malformed("authenticator data is shorter than 37 bytes") }
            guard bytes.count <= CBOR.maximumBytes else { throw .malformed("authenticator data is over \(CBOR.maximumBytes) bytes") }
            rpIDHash = Array(bytes[0..<32])
            flags = Flags(rawValue: bytes[32])
            signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
            var offset = 37
            if flags.contains(.attestedCredentialData) {
                guard bytes.count >= offset + 18 else { throw .malformed("attested credential data is truncated") }
                offset += 16   // AAGUID: not used (no attestation policy, A26)
                let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                offset += 2
                guard (16...1023).contains(length), bytes.count >= offset + length else { throw .malformed("the credential ID is truncated or outside 16–1023 bytes") }
                let id = Array(bytes[offset..<offset + length])
                offset += length
                let key: CBORValue
                let used: Int
                do { (key, used) = try CBOR.decodePrefix(bytes[offset...]) } catch { throw .malformed("the credential public key: \(error)") }
                offset += used
                credential = PasskeyCredential(id: id, publicKey: try WebAuthn.publicKey(cose: key), signCount: signCount)
            }
            if flags.contains(.extensionData) {
                guard offset < bytes.count else { throw .malformed("extension data is missing") }
                let extensions: CBORValue
                let used: Int
                do { (extensions, used) = try CBOR.decodePrefix(bytes[offset...]) } catch { throw .malformed("extension data: \(error)") }
                guard case .map = extensions else { throw .malformed("extension data is not a map") }
                offset += used
            }
            guard offset == bytes.count else { throw .malformed("\(bytes.count - offset) bytes after the authenticator data") }
        }
    }

    /// The X9.63 point of a COSE_Key (RFC 9052 §7; RFC 9053 §7.1.1): kty 2 (EC2), alg -7,
    /// crv 1 (P-256), x and y of 32 bytes each, and a point on the curve.
    static func publicKey(cose: CBORValue) throws(WebAuthnError) -> [UInt8] {
        guard case .map = cose else { throw .malformed("the credential public key is not a COSE_Key map") }
        guard case .int(let alg)? = cose[.int(3)] else { throw .malformed("the COSE_Key has no alg") }
        guard alg == es256 else { throw .unsupportedAlgorithm(alg) }
        guard cose[.int(1)] == .int(2), cose[.int(-1)] == .int(1), case .bytes(let x)? = cose[.int(-2)], case .bytes(let y)? = cose[.int(-3)],
              x.count == 32, y.count == 32 else { throw .badKey }
        let point = [0x04] + x + y
        guard P256.isValidPublicKey(point) else { throw .badKey }
        return point
    }

    /// Registration (§7.1, steps 7–19): checks clientDataJSON and the attestation object against
    /// the challenge issued and the relying party, and returns the new credential.
    /// Attestation (A26): `none` (empty statement); `packed` self-attestation (no `x5c`) is
    /// verified with the credential key; any other statement is not verified and the credential is
    /// taken as unattested (the server requests `attestation: "none"` and trusts no make or model).
    static func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8],
                                   relyingParty: PasskeyRelyingParty, requireUserVerification: Bool) throws(WebAuthnError) -> PasskeyCredential {
        try checkClientData(clientDataJSON, type: "webauthn.create", challenge: challenge, relyingParty: relyingParty)
        let object: CBORValue
        do { object = try CBOR.decode(attestationObject) } catch { throw .malformed("attestationObject: \(error)") }
        guard case .text(let format)? = object[.text("fmt")], let statement = object[.text("attStmt")], case .map = statement,
              case .bytes(let authBytes)? = object[.text("authData")] else {
            throw .malformed("attestationObject needs fmt (text), attStmt (map) and authData (bytes)")
        }
        let data = try AuthenticatorData(authBytes)
        try checkAuthenticatorData(data, relyingParty: relyingParty, requireUserVerification: requireUserVerification)
        guard let credential = data.credential else { throw .malformed("authData has no attested credential data (AT flag)") }
        switch format {
        case "none":
            guard statement == .map([:]) else { throw .badAttestation("fmt 'none' with a non-empty attStmt") }
        case "packed" where statement[.text("x5c")] == nil:
            guard case .int(let alg)? = statement[.text("alg")], case .bytes(let signature)? = statement[.text("sig")] else {
                throw .badAttestation("packed self-attestation needs alg and sig")
            }
            guard alg == es256 else { throw .badAttestation("packed self-attestation alg \(alg) is not the credential's (-7)") }
            let signed = authBytes + Digest.sha256(clientDataJSON)
            guard (try? P256.isValidSignature(signature, of: signed, publicKey: credential.publicKey)) == true else {
                throw .badAttestation("the packed self-attestation signature does not verify")
            }
        default:
            break   // not verified: taken as none (A26)
        }
        return credential
    }

    /// Authentication (§7.2, steps 11–21): checks an assertion by `stored` and returns the
    /// authenticator's new signature counter to store.
    static func verifyAssertion(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], challenge: [UInt8],
                                relyingParty: PasskeyRelyingParty, requireUserVerification: Bool,
                                stored: PasskeyCredential) throws(WebAuthnError) -> UInt32 {
        try checkClientData(clientDataJSON, type: "webauthn.get", challenge: challenge, relyingParty: relyingParty)
        let data = try AuthenticatorData(authenticatorData)
        try checkAuthenticatorData(data, relyingParty: relyingParty, requireUserVerification: requireUserVerification)
        guard signature.count <= 80 else { throw .malformed("the signature is over 80 bytes") }
        let signed = authenticatorData + Digest.sha256(clientDataJSON)
        guard (try? P256.isValidSignature(signature, of: signed, publicKey: stored.publicKey)) == true else { throw .badSignature }
        return try nextSignCount(stored: stored.signCount, received: data.signCount)
    }

    /// The signature-counter rule (§6.1.1): when either counter is nonzero the new one must be
    /// greater than the stored one; else the assertion is refused (a cloned authenticator).
    static func nextSignCount(stored: UInt32, received: UInt32) throws(WebAuthnError) -> UInt32 {
        if (stored != 0 || received != 0) && received <= stored {
            throw .signCountRegressed(stored: stored, received: received)
        }
        return received
    }

    private static func checkClientData(_ json: [UInt8], type: String, challenge: [UInt8],
                                        relyingParty: PasskeyRelyingParty) throws(WebAuthnError) {
        let client = try clientData(json)
        guard client.type == type else { throw .wrongType(expected: type) }
        guard Digest.equal(client.challenge, challenge) else { throw .wrongChallenge }
        guard client.origin == relyingParty.origin, !client.crossOrigin else { throw .wrongOrigin(client.origin) }
    }

    private static func checkAuthenticatorData(_ data: AuthenticatorData, relyingParty: PasskeyRelyingParty,
                                               requireUserVerification: Bool) throws(WebAuthnError) {
        guard Digest.equal(data.rpIDHash, Digest.sha256(Array(relyingParty.id.utf8))) else { throw .wrongRelyingParty }
        guard data.flags.contains(.userPresent) else { throw .userNotPresent }
        if requireUserVerification && !data.flags.contains(.userVerified) { throw .userNotVerified }
    }
}
