import Foundation
import TandemTestSupport
import Testing
@testable import TandemServer
import TandemCore
import TandemCrypto

/// ID-token verification on its own (decisions A18–A19): every rule, table-driven, with keys made
/// in the test (P-256 through TandemCrypto, RSA with the `openssl` command), and the provider
/// sign-in's state, nonce and PKCE values (A23).
@Suite struct IDTokenVerifierTests {
    static let issuer = "https://id.example"
    static let now: Int64 = 1_800_000_000

    /// An RSA key made by `openssl genpkey`: signs with `openssl dgst`, public parts as a JWK.
    final class RSAKey: Sendable {
        let path: String
        let modulus: [UInt8]

        init(bits: Int = 2048) throws {
            path = NSTemporaryDirectory() + "tandem-rsa-\(UUID().uuidString).pem"
            ExitCleanup.removeAtExit(path)
            _ = try Self.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", path])
            let text = String(decoding: try Self.openssl(["rsa", "-in", path, "-noout", "-modulus"]), as: UTF8.self)
            let hex = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("Modulus=".count))
            modulus = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16)! }
        }

        func sign(_ input: [UInt8]) throws -> [UInt8] { try Self.openssl(["dgst", "-sha256", "-sign", path], input: input) }

        func jwk(kid: String?) -> JSONWebKeySet.Key {
            JSONWebKeySet.Key(kid: kid, kty: "RSA", alg: nil, n: modulus, e: [1, 0, 1])
        }

        static func openssl(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            let stdin = Pipe(), stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try process.run()
            try stdin.fileHandleForWriting.write(contentsOf: Data(input))
            try stdin.fileHandleForWriting.close()
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            let processEnd = process.waitForTermination()
            guard processEnd.status == 0 else { throw TestFailure("openssl \(arguments.joined(separator: " ")) failed") }
            return Array(out)
        }
    }

    static let rsa = Result { try RSAKey() }
    static let otherRSA = Result { try RSAKey() }
    static let ec = Result { try P256.PrivateKey() }

    static func ecJWK(_ key: P256.PrivateKey, kid: String?) -> JSONWebKeySet.Key {
        let point = key.publicKey
        return JSONWebKeySet.Key(kid: kid, kty: "EC", alg: nil, x: Array(point[1..<33]), y: Array(point[33..<65]))
    }

    static func claims(_ changes: JSONObject = [:], removing: [String] = []) -> JSONObject {
        var o: JSONObject = ["iss": .string(issuer), "aud": "app", "sub": "user-1", "iat": .int(now - 10), "exp": .int(now + 600),
                             "nonce": "n-1", "email": "a@example.com", "email_verified": true]
        for (key, value) in changes.entries { o[key] = value }
        for key in removing { o[key] = nil }
        return o
    }

    static func part(_ object: JSONObject) -> String { Base64URL.encode(JSONWriter.bytes(.object(object))) }

    /// How a token is signed in a case.
    enum Signing { case rsa, otherRSA, ec, ecDER, none, hmac, flipped }

    static func token(header: JSONObject, payload: JSONObject, signing: Signing) throws -> String {
        let input = part(header) + "." + part(payload)
        let bytes = Array(input.utf8)
        let signature: [UInt8]
        switch signing {
        case .rsa: signature = try rsa.get().sign(bytes)
        case .otherRSA: signature = try otherRSA.get().sign(bytes)
        case .flipped:
            var s = try rsa.get().sign(bytes)
            s[s.count / 2] ^= 0x01
            signature = s
        case .ec: signature = try #require(JWSSignature.rawSignature(der: try ec.get().signature(for: bytes)))
        case .ecDER: signature = try ec.get().signature(for: bytes)
        case .none: signature = []
        case .hmac: signature = Digest.hmacSHA256(key: try rsa.get().modulus, message: bytes)
        }
        return input + "." + Base64URL.encode(signature)
    }

    static func keys() throws -> JSONWebKeySet {
        JSONWebKeySet(keys: [try rsa.get().jwk(kid: "rsa-1"), ecJWK(try ec.get(), kid: "ec-1")])
    }

    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var header: JSONObject = ["alg": "RS256", "kid": "rsa-1"]
        var payload: JSONObject = IDTokenVerifierTests.claims()
        var signing: Signing = .rsa
        var algorithms: Set<String> = ["RS256", "ES256"]
        var nonce: String? = "n-1"
        /// nil: accepted; else the error's case name.
        var refusal: String?
    }

    static let cases: [Case] = [
        Case(description: "RS256, kid in the set"),
        Case(description: "ES256, raw r||s", header: ["alg": "ES256", "kid": "ec-1"], signing: .ec),
        Case(description: "aud as an array holding ours", payload: claims(["aud": ["other", "app"]])),
        Case(description: "no nonce expected (exchange)", payload: claims(removing: ["nonce"]), nonce: nil),
        Case(description: "expired 30 s ago: inside the skew", payload: claims(["exp": .int(now - 30)])),
        Case(description: "exp as a double", payload: claims(["exp": .double(Double(now + 60))])),
        Case(description: "alg none", header: ["alg": "none"], signing: .none, refusal: "algorithm"),
        Case(description: "alg None spelled otherwise", header: ["alg": "None"], signing: .none, refusal: "algorithm"),
        Case(description: "alg HS256 keyed with the RSA modulus", header: ["alg": "HS256", "kid": "rsa-1"], signing: .hmac, refusal: "algorithm"),
        Case(description: "RS256 where only ES256 is configured", algorithms: ["ES256"], refusal: "algorithm"),
        Case(description: "no alg", header: ["kid": "rsa-1"], refusal: "malformed"),
        Case(description: "kid not in the set", header: ["alg": "RS256", "kid": "rotated-away"], refusal: "unknownKey"),
        Case(description: "kid of the EC key under RS256", header: ["alg": "RS256", "kid": "ec-1"], refusal: "unknownKey"),
        Case(description: "no kid and two keys could fit", header: ["alg": "RS256"], refusal: nil),
        Case(description: "signed by another RSA key under our kid", signing: .otherRSA, refusal: "signature"),
        Case(description: "one signature bit flipped", signing: .flipped, refusal: "signature"),
        Case(description: "ES256 signature in DER instead of r||s", header: ["alg": "ES256", "kid": "ec-1"], signing: .ecDER, refusal: "signature"),
        Case(description: "another issuer", payload: claims(["iss": "https://evil.example"]), refusal: "issuer"),
        Case(description: "issuer with a trailing slash", payload: claims(["iss": .string(issuer + "/")]), refusal: "issuer"),
        Case(description: "another audience", payload: claims(["aud": "someone-else"]), refusal: "audience"),
        Case(description: "audience array without ours", payload: claims(["aud": ["x", "y"]]), refusal: "audience"),
        Case(description: "no audience", payload: claims(removing: ["aud"]), refusal: "audience"),
        Case(description: "expired 2 minutes ago", payload: claims(["exp": .int(now - 120)]), refusal: "expired"),
        Case(description: "not before 2 minutes from now", payload: claims(["nbf": .int(now + 120)]), refusal: "expired"),
        Case(description: "issued 2 minutes in the future", payload: claims(["iat": .int(now + 120)]), refusal: "expired"),
        Case(description: "no exp", payload: claims(removing: ["exp"]), refusal: "malformed"),
        Case(description: "exp as a string", payload: claims(["exp": "soon"]), refusal: "malformed"),
        Case(description: "no iat", payload: claims(removing: ["iat"]), refusal: "malformed"),
        Case(description: "no sub", payload: claims(removing: ["sub"]), refusal: "malformed"),
        Case(description: "empty sub", payload: claims(["sub": ""]), refusal: "malformed"),
        Case(description: "another nonce", payload: claims(["nonce": "n-2"]), refusal: "nonce"),
        Case(description: "no nonce where one was sent", payload: claims(removing: ["nonce"]), refusal: "nonce"),
    ]

    static func name(_ error: IDTokenError) -> String {
        switch error {
        case .malformed: "malformed"
        case .algorithm: "algorithm"
        case .unknownKey: "unknownKey"
        case .signature: "signature"
        case .issuer: "issuer"
        case .audience: "audience"
        case .expired: "expired"
        case .nonce: "nonce"
        case .provider: "provider"
        }
    }

    @Test(arguments: cases)
    func eachRule(_ c: Case) throws {
        var keys = try Self.keys()
        if c.description.hasPrefix("no kid") {
            // Two RSA keys: a token without kid cannot pick one; with a single key it can.
            keys.keys.append(try Self.otherRSA.get().jwk(kid: "rsa-2"))
            let refused = try Self.outcome(c, keys: keys)
            #expect(refused?.hasPrefix("unknownKey") == true, "\(refused ?? "accepted")")
            keys.keys.removeAll { $0.kid == "rsa-2" }
        }
        let outcome = try Self.outcome(c, keys: keys)
        #expect(outcome == c.refusal, "\(c.description): \(outcome ?? "accepted")")
    }

    static func outcome(_ c: Case, keys: JSONWebKeySet) throws -> String? {
        let token = try token(header: c.header, payload: c.payload, signing: c.signing)
        let verifier = IDTokenVerifier(issuer: issuer, audiences: ["app"], algorithms: c.algorithms)
        do {
            let claims = try verifier.verify(token, keys: keys, nonce: c.nonce, now: now)
            #expect(claims.subject == "user-1" && claims.methodSubject == issuer + "|user-1" && claims.emailVerified)
            return nil
        } catch {
            return name(error) + (name(error) == c.refusal ? "" : " (\(error))")
        }
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!.e30.", "e30.e30", "W10.e30.", "e30.W10.", "e30=.e30.", String(repeating: "a", count: 20_000)])
    func malformedTokensAreRefusedBeforeAnyKey(_ text: String) {
        #expect(throws: IDTokenError.self) { try CompactJWS(text) }
    }

    @Test func emailVerifiedIsTrueOnlyWhenTheProviderSaysSo() throws {
        let verifier = IDTokenVerifier(issuer: Self.issuer, audiences: ["app"])
        for (value, verified) in [(JSONValue.bool(true), true), (.string("true"), true), (.bool(false), false), (.string("yes"), false), (.null, false)] {
            let claims = try verifier.claims(Self.claims(["email_verified": value]), nonce: nil, now: Self.now)
            #expect(claims.emailVerified == verified, "\(value)")
        }
    }

    @Test func jwkSetsKeepUsableSigningKeysOnly() throws {
        let rsa = try Self.rsa.get()
        let n = Base64URL.encode(rsa.modulus)
        let text = """
            {"keys": [{"kty": "RSA", "kid": "a", "n": "\(n)", "e": "AQAB"},
                      {"kty": "RSA", "kid": "enc", "use": "enc", "n": "\(n)", "e": "AQAB"},
                      {"kty": "EC", "kid": "p384", "crv": "P-384", "x": "AA", "y": "AA"},
                      {"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": "AA"},
                      {"kty": "RSA", "kid": "broken"}]}
            """
        let set = try JSONWebKeySet(json: Array(text.utf8))
        #expect(set.keys.map(\.kid) == ["a"])
        #expect(throws: IDTokenError.self) { try JSONWebKeySet(json: Array("[]".utf8)) }
    }

    @Test func rs256RefusesShortModuliAndES256OffCurvePoints() throws {
        let small = try RSAKey(bits: 1024)
        let message = Array("m".utf8)
        let signature = try small.sign(message)
        #expect(throws: JWSSignatureError.invalidKey) {
            try JWSSignature.isValidRS256(signature, of: message, modulus: small.modulus, exponent: [1, 0, 1])
        }
        #expect(throws: JWSSignatureError.invalidKey) {
            try JWSSignature.isValidES256([UInt8](repeating: 1, count: 64), of: message, x: [UInt8](repeating: 1, count: 32), y: [UInt8](repeating: 2, count: 32))
        }
    }

    @Test func providerStateIsBoundToTheFlowCookieAndExpires() {
        let secret = Digest.randomBytes(32)
        let flow = Tokens.random(prefix: "")
        let state = ProviderFlow.state(container: "iCloud.app", provider: "Mock", apiToken: "tda_x", flow: flow, secret: secret, expiresAt: 2000)
        let checked = ProviderFlow.check(state, flow: flow, secret: secret, now: 1000)
        #expect(checked?.container == "iCloud.app" && checked?.provider == "Mock" && checked?.apiToken == "tda_x")
        #expect(ProviderFlow.check(state, flow: Tokens.random(prefix: ""), secret: secret, now: 1000) == nil, "another browser's cookie")
        #expect(ProviderFlow.check(state, flow: flow, secret: secret, now: 2000) == nil, "expired")
        #expect(ProviderFlow.check(state, flow: flow, secret: Digest.randomBytes(32), now: 1000) == nil, "another server")
        let forged = Base64URL.encode(Array("iCloud.other\nMock\n2000\ntda_x".utf8)) + "." + state.split(separator: ".")[1]
        #expect(ProviderFlow.check(forged, flow: flow, secret: secret, now: 1000) == nil, "payload changed")
        // PKCE S256: the challenge is base64url(SHA-256(verifier)), the verifier 43 characters.
        let verifier = ProviderFlow.verifier(flow: flow, secret: secret)
        #expect(verifier.count == 43)
        #expect(ProviderFlow.challenge(flow: flow, secret: secret) == Base64URL.encode(Digest.sha256(Array(verifier.utf8))))
        #expect(ProviderFlow.nonce(flow: flow, secret: secret) != ProviderFlow.nonce(flow: Tokens.random(prefix: ""), secret: secret))
    }

    @Test(arguments: [
        ("iCloud.app,https://id.example,app", true), ("iCloud.app,http://127.0.0.1:9400,app", true),
        ("iCloud.app,id.example,app", false), ("iCloud.app,https://id.example?x=1,app", false), ("iCloud.app,https://id.example", false),
        (",https://id.example,app", false), ("iCloud.app,https://id.example,", false),
    ])
    func exchangeFlagsParse(text: String, valid: Bool) {
        let parsed = if case .success = OIDCSettings.exchange(text) { true } else { false }
        #expect(parsed == valid, "\(text)")
    }

    @Test(arguments: [
        ("iCloud.app,Mock,https://id.example,client", true), ("iCloud.app,Mock,https://id.example,client,secret", true),
        ("iCloud.app,Mock,https://id.example", false), ("iCloud.app,,https://id.example,client", false),
        ("iCloud.app,Mock,https://id.example,client,", false),
    ])
    func providerFlagsParse(text: String, valid: Bool) {
        let parsed = if case .success = OIDCSettings.provider(text) { true } else { false }
        #expect(parsed == valid, "\(text)")
    }
}
