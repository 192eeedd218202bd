import Foundation
@testable import TandemServer
import TandemCore
import TandemCrypto

/// A CBOR encoder for test fixtures (RFC 8949 §3: definite lengths, shortest heads), the
/// counterpart of what authenticators send. Not used by the server.
indirect enum TestCBOR {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case array([TestCBOR])
    case map([(TestCBOR, TestCBOR)])
    case raw([UInt8])

    var encoded: [UInt8] {
        switch self {
        case .int(let n): return n >= 0 ? Self.head(0, UInt64(n)) : Self.head(1, UInt64(-1 - n))
        case .bytes(let b): return Self.head(2, UInt64(b.count)) + b
        case .text(let t): return Self.head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .array(let items): return Self.head(4, UInt64(items.count)) + items.flatMap(\.encoded)
        case .map(let pairs): return Self.head(5, UInt64(pairs.count)) + pairs.flatMap { $0.0.encoded + $0.1.encoded }
        case .raw(let bytes): return bytes
        }
    }

    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let m = major << 5
        switch value {
        case 0..<24: return [m | UInt8(value)]
        case 24..<256: return [m | 24, UInt8(value)]
        case 256..<65536: return [m | 25] + withUnsafeBytes(of: UInt16(value).bigEndian, Array.init)
        case 65536..<(1 << 32): return [m | 26] + withUnsafeBytes(of: UInt32(value).bigEndian, Array.init)
        default: return [m | 27] + withUnsafeBytes(of: value.bigEndian, Array.init)
        }
    }
}

/// A software authenticator for tests: a P-256 key over libcrypto, making the bytes a browser
/// passes on from `navigator.credentials.create` / `get` (WebAuthn §6.1, §6.5.4).
struct TestAuthenticator {
    let key: P256.PrivateKey
    let credentialID: [UInt8]

    init() throws {
        key = try P256.PrivateKey()
        credentialID = Digest.randomBytes(32)
    }

    /// The COSE_Key of the public key (EC2, P-256), with `alg`.
    func coseKey(alg: Int64 = -7) -> TestCBOR {
        let point = key.publicKey
        return .map([(.int(1), .int(2)), (.int(3), .int(alg)), (.int(-1), .int(1)),
                     (.int(-2), .bytes(Array(point[1..<33]))), (.int(-3), .bytes(Array(point[33..<65])))])
    }

    static let up: UInt8 = 0x01, uv: UInt8 = 0x04, at: UInt8 = 0x40

    func authenticatorData(rpID: String, flags: UInt8, signCount: UInt32, attested: TestCBOR? = nil) -> [UInt8] {
        var data = Digest.sha256(Array(rpID.utf8)) + [flags | (attested == nil ? 0 : Self.at)]
        data += withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if let attested {
            data += [UInt8](repeating: 0, count: 16)   // AAGUID
            data += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
            data += attested.encoded
        }
        return data
    }

    static func clientData(type: String, challenge: [UInt8], origin: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    func attestationObject(authData: [UInt8], fmt: String = "none", statement: TestCBOR = .map([])) -> [UInt8] {
        TestCBOR.map([(.text("fmt"), .text(fmt)), (.text("attStmt"), statement), (.text("authData"), .bytes(authData))]).encoded
    }

    func signature(authData: [UInt8], clientData: [UInt8]) throws -> [UInt8] {
        try key.signature(for: authData + Digest.sha256(clientData))
    }
}
