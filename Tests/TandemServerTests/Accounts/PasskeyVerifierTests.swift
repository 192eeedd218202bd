import Foundation
import Testing
@testable import TandemServer
import TandemCore
import TandemCrypto

/// The passkey verifier on real bytes: registrations and assertions made by a P-256 key over
/// libcrypto (TestAuthenticator), CBOR through libcbor, challenges through PasskeyChallenges
/// (decisions A24–A27). Each table row changes one thing in a good ceremony and names the refusal.
@Suite struct PasskeyVerifierTests {
    static let party = PasskeyRelyingParty(id: "localhost", origin: "http://localhost:8080")

    // MARK: Registration

    struct Registration: Sendable {
        var type = "webauthn.create"
        var origin = party.origin
        var rpID = party.id
        var flags: UInt8 = TestAuthenticator.up | TestAuthenticator.uv
        var alg: Int64 = -7
        var otherChallenge = false
        var fmt = "none"
        var statement: (@Sendable (TestAuthenticator, [UInt8], [UInt8]) throws -> TestCBOR)?
        var mangle: (@Sendable ([UInt8]) -> [UInt8])?
    }

    static let registrations: [(String, Registration, WebAuthnError?)] = [
        ("a good registration", Registration(), nil),
        ("wrong origin", Registration(origin: "http://localhost:9999"), .wrongOrigin("http://localhost:9999")),
        ("wrong RP ID hash", Registration(rpID: "evil.example"), .wrongRelyingParty),
        ("wrong type", Registration(type: "webauthn.get"), .wrongType(expected: "webauthn.create")),
        ("another challenge", Registration(otherChallenge: true), .wrongChallenge),
        ("user not present", Registration(flags: TestAuthenticator.uv), .userNotPresent),
        ("user not verified", Registration(flags: TestAuthenticator.up), .userNotVerified),
        ("unsupported alg RS256", Registration(alg: -257), .unsupportedAlgorithm(-257)),
        ("unsupported alg EdDSA", Registration(alg: -8), .unsupportedAlgorithm(-8)),
        ("fmt none with a statement", Registration(statement: { _, _, _ in .map([(.text("x"), .int(1))]) }),
         .badAttestation("fmt 'none' with a non-empty attStmt")),
        ("packed self-attestation", Registration(fmt: "packed", statement: { a, auth, client in
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(try a.signature(authData: auth, clientData: client)))]) }), nil),
        ("packed self-attestation, bad signature", Registration(fmt: "packed", statement: { a, auth, _ in
            .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes(try a.signature(authData: auth, clientData: [1])))]) }),
         .badAttestation("the packed self-attestation signature does not verify")),
        ("truncated CBOR", Registration(mangle: { Array($0.dropLast(5)) }), .malformed("")),
        ("oversized CBOR", Registration(mangle: { _ in TestCBOR.bytes([UInt8](repeating: 7, count: CBOR.maximumBytes)).encoded }), .malformed("")),
        ("trailing bytes", Registration(mangle: { $0 + [0] }), .malformed("")),
    ]

    @Test(arguments: registrations)
    func registration(_ name: String, _ row: Registration, _ expected: WebAuthnError?) throws {
        let authenticator = try TestAuthenticator()
        let challenge = Digest.randomBytes(32)
        let client = TestAuthenticator.clientData(type: row.type, challenge: row.otherChallenge ? Digest.randomBytes(32) : challenge, origin: row.origin)
        let auth = authenticator.authenticatorData(rpID: row.rpID, flags: row.flags, signCount: 0, attested: authenticator.coseKey(alg: row.alg))
        var object = authenticator.attestationObject(authData: auth, fmt: row.fmt, statement: try row.statement?(authenticator, auth, client) ?? .map([]))
        if let mangle = row.mangle { object = mangle(object) }
        do {
            let credential = try WebAuthn.verifyRegistration(clientDataJSON: client, attestationObject: object, challenge: challenge,
                                                             relyingParty: Self.party, requireUserVerification: true)
            #expect(expected == nil, "\(name): accepted")
            #expect(credential.id == authenticator.credentialID && credential.publicKey == authenticator.key.publicKey && credential.signCount == 0)
        } catch {
            Self.expect(error, expected, name)
        }
    }

    // MARK: Assertion

    struct Assertion: Sendable {
        var type = "webauthn.get"
        var origin = party.origin
        var rpID = party.id
        var flags: UInt8 = TestAuthenticator.up | TestAuthenticator.uv
        var stored: UInt32 = 0
        var received: UInt32 = 0
        var otherKey = false
        var requireUV = true
    }

    static let assertions: [(String, Assertion, WebAuthnError?)] = [
        ("a good assertion, no counters", Assertion(), nil),
        ("a good assertion, counter advanced", Assertion(stored: 4, received: 5), nil),
        ("wrong origin", Assertion(origin: "https://evil.example"), .wrongOrigin("https://evil.example")),
        ("wrong RP ID hash", Assertion(rpID: "example.com"), .wrongRelyingParty),
        ("wrong type", Assertion(type: "webauthn.create"), .wrongType(expected: "webauthn.get")),
        ("user not present", Assertion(flags: TestAuthenticator.uv), .userNotPresent),
        ("user not verified", Assertion(flags: TestAuthenticator.up), .userNotVerified),
        ("no UV, not required", Assertion(flags: TestAuthenticator.up, requireUV: false), nil),
        ("bad signature (another key)", Assertion(otherKey: true), .badSignature),
        ("counter regression", Assertion(stored: 10, received: 5), .signCountRegressed(stored: 10, received: 5)),
        ("counter not advanced", Assertion(stored: 7, received: 7), .signCountRegressed(stored: 7, received: 7)),
        ("counter dropped to zero", Assertion(stored: 3, received: 0), .signCountRegressed(stored: 3, received: 0)),
    ]

    @Test(arguments: assertions)
    func assertion(_ name: String, _ row: Assertion, _ expected: WebAuthnError?) throws {
        let authenticator = try TestAuthenticator()
        let signer = row.otherKey ? try TestAuthenticator() : authenticator
        let challenge = Digest.randomBytes(32)
        let client = TestAuthenticator.clientData(type: row.type, challenge: challenge, origin: row.origin)
        let auth = authenticator.authenticatorData(rpID: row.rpID, flags: row.flags, signCount: row.received)
        let signature = try signer.signature(authData: auth, clientData: client)
        let stored = PasskeyCredential(id: authenticator.credentialID, publicKey: authenticator.key.publicKey, signCount: row.stored)
        do {
            let count = try WebAuthn.verifyAssertion(clientDataJSON: client, authenticatorData: auth, signature: signature, challenge: challenge,
                                                     relyingParty: Self.party, requireUserVerification: row.requireUV, stored: stored)
            #expect(expected == nil, "\(name): accepted")
            #expect(count == row.received)
        } catch {
            Self.expect(error, expected, name)
        }
    }

    // MARK: Challenges

    @Test func challengesAreSingleUseExpireAndAreBoundToTheirSessionAndStep() throws {
        let challenges = PasskeyChallenges()
        let t0: Int64 = 1_000_000
        func issue(_ purpose: PasskeyChallenges.Purpose = .get) throws -> [UInt8] {
            try challenges.issue(purpose: purpose, binding: "page:a", container: "c", relyingParty: Self.party, address: "1.2.3.4", at: t0).challenge
        }
        let cases: [(String, (PasskeyChallenges) throws -> Void, WebAuthnError)] = [
            ("reused", { c in let x = try issue(); _ = try c.take(x, purpose: .get, binding: "page:a", container: "c", at: t0 + 1)
                _ = try c.take(x, purpose: .get, binding: "page:a", container: "c", at: t0 + 2) }, .challengeUnknown),
            ("expired", { c in _ = try c.take(try issue(), purpose: .get, binding: "page:a", container: "c", at: t0 + 5 * 60 * 1000) }, .challengeExpired),
            ("never issued", { c in _ = try c.take(Digest.randomBytes(32), purpose: .get, binding: "page:a", container: "c", at: t0) }, .challengeUnknown),
            ("another browser session", { c in _ = try c.take(try issue(), purpose: .get, binding: "page:b", container: "c", at: t0) }, .challengeMismatch),
            ("another step", { c in _ = try c.take(try issue(.create), purpose: .get, binding: "page:a", container: "c", at: t0) }, .challengeMismatch),
            ("another app", { c in _ = try c.take(try issue(), purpose: .get, binding: "page:a", container: "d", at: t0) }, .challengeMismatch),
        ]
        for (name, run, expected) in cases {
            #expect(throws: expected, "\(name)") { try run(challenges) }
        }
        let fresh = try issue()
        #expect(try challenges.take(fresh, purpose: .get, binding: "page:a", container: "c", at: t0 + 5 * 60 * 1000 - 1).challenge == fresh)
        // A mismatched use consumes the challenge too.
        let burnt = try issue()
        #expect(throws: WebAuthnError.challengeMismatch) { try challenges.take(burnt, purpose: .get, binding: "page:x", container: "c", at: t0) }
        #expect(throws: WebAuthnError.challengeUnknown) { try challenges.take(burnt, purpose: .get, binding: "page:a", container: "c", at: t0) }
    }

    @Test func oneAddressCannotHoldMoreThanItsShareOfChallenges() throws {
        let challenges = PasskeyChallenges()
        for _ in 0..<PasskeyChallenges.perAddress {
            _ = try challenges.issue(purpose: .get, binding: "b", container: "c", relyingParty: Self.party, address: "9.9.9.9", at: 0)
        }
        #expect(throws: CloudKitError.self) {
            try challenges.issue(purpose: .get, binding: "b", container: "c", relyingParty: Self.party, address: "9.9.9.9", at: 1)
        }
        _ = try challenges.issue(purpose: .get, binding: "b", container: "c", relyingParty: Self.party, address: "8.8.8.8", at: 1)
        _ = try challenges.issue(purpose: .get, binding: "b", container: "c", relyingParty: Self.party, address: "9.9.9.9", at: 5 * 60 * 1000 + 1)
    }

    // MARK: Relying party

    @Test(arguments: [
        ("http://localhost:8080", nil, "localhost", "http://localhost:8080"),
        ("https://id.example.com/base", nil, "id.example.com", "https://id.example.com"),
        ("https://id.example.com", "example.com", "example.com", "https://id.example.com"),
        ("http://127.0.0.1:8080", nil, nil, nil),
        ("https://id.example.com", "other.com", nil, nil),
        ("https://id.example.com", "ample.com", nil, nil),
    ] as [(String, String?, String?, String?)])
    func relyingPartyComesFromTheServersURL(_ base: String, _ rpID: String?, _ id: String?, _ origin: String?) {
        let party = try? PasskeyRelyingParty(baseURL: base, rpID: rpID)
        #expect(party?.id == id && party?.origin == origin, "\(base) \(rpID ?? "-")")
    }

    // MARK: CBOR

    static let cborCases: [(String, [UInt8], CBORValue?)] = [
        ("a map of int and text keys", TestCBOR.map([(.int(1), .int(2)), (.int(-3), .bytes([1, 2])), (.text("fmt"), .text("none"))]).encoded,
         .map([.int(1): .int(2), .int(-3): .bytes([1, 2]), .text("fmt"): .text("none")])),
        ("an array", TestCBOR.array([.int(-1), .text("é")]).encoded, .array([.int(-1), .text("é")])),
        ("true, false, null", [0x83, 0xF5, 0xF4, 0xF6], .array([.bool(true), .bool(false), .null])),
        ("empty", [], nil),
        ("truncated", Array(TestCBOR.bytes([1, 2, 3, 4]).encoded.dropLast()), nil),
        ("oversized", TestCBOR.bytes([UInt8](repeating: 0, count: CBOR.maximumBytes)).encoded, nil),
        ("nested 9 deep", [UInt8](repeating: 0x81, count: 9) + [0x00], nil),
        ("nested 2000 deep", [UInt8](repeating: 0x81, count: 2000) + [0x00], nil),
        ("duplicate keys", TestCBOR.map([(.int(1), .int(2)), (.int(1), .int(3))]).encoded, nil),
        ("a bytes key", TestCBOR.map([(.bytes([1]), .int(2))]).encoded, nil),
        ("a tag", [0xC0, 0x61, 0x61], nil),
        ("a float", [0xFA, 0x3F, 0x80, 0x00, 0x00], nil),
        ("indefinite bytes", [0x5F, 0x41, 0x01, 0xFF], nil),
        ("indefinite map", [0xBF, 0x01, 0x02, 0xFF], nil),
        ("an integer beyond Int64", [0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], nil),
        ("text that is not UTF-8", [0x62, 0xC3, 0x28], nil),
        ("a length beyond the data", [0x5A, 0x7F, 0xFF, 0xFF, 0xFF], nil),
        ("trailing bytes", [0x01, 0x02], nil),
        ("not CBOR (a break alone)", [0xFF], nil),
    ]

    @Test(arguments: cborCases)
    func cborDecoding(_ name: String, _ bytes: [UInt8], _ expected: CBORValue?) {
        let decoded = try? CBOR.decode(bytes)
        #expect(decoded == expected, "\(name)")
    }

    @Test func cborDepthAndSizeLimitsAreStatedErrors() {
        #expect(throws: CBORError.tooDeep) { try CBOR.decode([UInt8](repeating: 0x81, count: CBOR.maximumDepth + 1) + [0x00]) }
        #expect(throws: CBORError.tooLarge(CBOR.maximumBytes + 1)) { try CBOR.decode([UInt8](repeating: 0, count: CBOR.maximumBytes + 1)) }
        #expect(throws: Never.self) { try CBOR.decode([UInt8](repeating: 0x81, count: CBOR.maximumDepth) + [0x00]) }
    }

    static func expect(_ error: any Error, _ expected: WebAuthnError?, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let expected else {
            Issue.record("\(name): refused with \(error)", sourceLocation: sourceLocation)
            return
        }
        if case .malformed = expected, case WebAuthnError.malformed = error { return }
        #expect(error as? WebAuthnError == expected, "\(name): \(error)", sourceLocation: sourceLocation)
    }
}
