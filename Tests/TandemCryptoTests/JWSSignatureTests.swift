import Foundation
import Testing
@testable import TandemCrypto

/// RS256 and ES256 as JWS carries them (RFC 7518 §3.3, §3.4), keys made in the test: RSA with
/// the `openssl` command, P-256 with `P256.PrivateKey`.
@Suite struct JWSSignatureTests {
    static func openssl(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: Data(input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(out)
    }

    @Test func rs256VerifiesOpenSSLSignaturesFromTheModulusAndExponent() throws {
        let path = NSTemporaryDirectory() + "jws-rsa-\(UUID().uuidString).pem"
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path])
        let text = String(decoding: try Self.openssl(["rsa", "-in", path, "-noout", "-modulus"]), as: UTF8.self)
        let hex = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("Modulus=".count))
        let n = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16)! }
        #expect(n.count == 256)
        #expect(JWSSignature.rsaKey(n: n, e: [1, 0, 1]) != nil)
        let message = Array("header.payload".utf8)
        let signature = try Self.openssl(["dgst", "-sha256", "-sign", path], input: message)
        #expect(signature.count == 256)
        #expect(try JWSSignature.isValidRS256(signature, of: message, modulus: n, exponent: [1, 0, 1]))
        #expect(try !JWSSignature.isValidRS256(signature, of: message + [0], modulus: n, exponent: [1, 0, 1]))
        #expect(try !JWSSignature.isValidRS256(signature, of: message, modulus: n, exponent: [3]))
    }

    @Test func es256TakesRawRAndSNotDER() throws {
        let key = try P256.PrivateKey()
        let message = Array("header.payload".utf8)
        let der = try key.signature(for: message)
        let raw = try #require(JWSSignature.rawSignature(der: der))
        let point = key.publicKey
        let x = Array(point[1..<33]), y = Array(point[33..<65])
        #expect(try JWSSignature.isValidES256(raw, of: message, x: x, y: y))
        #expect(try !JWSSignature.isValidES256(der, of: message, x: x, y: y))
        #expect(try !JWSSignature.isValidES256(raw, of: message + [0], x: x, y: y))
        #expect(JWSSignature.derSignature(raw: raw) == der || JWSSignature.derSignature(raw: raw).map { try! P256.isValidSignature($0, of: message, publicKey: point) } == true)
    }
}
