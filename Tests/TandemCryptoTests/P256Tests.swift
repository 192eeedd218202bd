import Foundation
import Testing
@testable import TandemCrypto

/// P-256 keys and signatures, checked against the `openssl` command line (a separate
/// implementation reading the same standard encodings).
struct P256Tests {
    @Test("A private key survives DER and keeps its public key")
    func derRoundTrip() throws {
        let key = try P256.PrivateKey()
        let copy = try P256.PrivateKey(derRepresentation: key.derRepresentation)
        #expect(copy.publicKey == key.publicKey)
        #expect(key.publicKey.count == 65 && key.publicKey.first == 0x04)
        #expect(throws: P256Error.invalidKey) { try P256.PrivateKey(derRepresentation: [0x30, 0x03, 0x02, 0x01, 0x01]) }
    }

    @Test("Our signature verifies with openssl, and openssl's with ours")
    func interoperatesWithOpenSSLCommandLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p256-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let message = Array("challenge bytes".utf8)
        try Data(message).write(to: URL(fileURLWithPath: path("message")))

        // Ours → openssl.
        let key = try P256.PrivateKey()
        try Data(key.derRepresentation).write(to: URL(fileURLWithPath: path("ours.der")))
        try Data(try key.signature(for: message)).write(to: URL(fileURLWithPath: path("ours.sig")))
        try openssl(["pkey", "-inform", "DER", "-in", path("ours.der"), "-pubout", "-out", path("ours.pub")])
        let verified = try openssl(["dgst", "-sha256", "-verify", path("ours.pub"), "-signature", path("ours.sig"), path("message")])
        #expect(verified.contains("Verified OK"))

        // openssl → ours.
        try openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path("theirs.pem")])
        try openssl(["dgst", "-sha256", "-sign", path("theirs.pem"), "-out", path("theirs.sig"), path("message")])
        try openssl(["pkey", "-in", path("theirs.pem"), "-pubout", "-outform", "DER", "-out", path("theirs.spki")])
        let spki = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path("theirs.spki"))))
        let publicKey = Array(spki.suffix(65))
        let signature = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path("theirs.sig"))))
        #expect(try P256.isValidSignature(signature, of: message, publicKey: publicKey))
        #expect(try !P256.isValidSignature(signature, of: message + [0], publicKey: publicKey))
        #expect(try !P256.isValidSignature(signature, of: message, publicKey: key.publicKey))
    }

    @discardableResult
    func openssl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw OpenSSLFailed(arguments: arguments, output: text) }
        return text
    }

    struct OpenSSLFailed: Error { let arguments: [String]; let output: String }
}
