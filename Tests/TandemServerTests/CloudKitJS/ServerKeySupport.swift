import Foundation
import TandemCore
import TandemCrypto
import TandemTestSupport

/// A server-to-server key made as an operator makes one (`openssl ecparam` / `openssl ec -pubout`,
/// then `tandem key add`), with its private key for signing requests in the test.
struct ServerKey {
    var id: String
    var privateKey: P256.PrivateKey
}

extension TestServer {
    /// Generates a P-256 key with the openssl command line, registers its public half for the
    /// container acting as `user` (email), and returns the key ID with the private key.
    func serverKey(user: String, container: String = TestServer.container) throws -> ServerKey {
        let directory = NSTemporaryDirectory() + "tandem-key-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try run("/usr/bin/openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", directory + "/key.pem"])
        try run("/usr/bin/openssl", ["ec", "-in", directory + "/key.pem", "-pubout", "-out", directory + "/pub.pem"])
        try run("/usr/bin/openssl", ["ec", "-in", directory + "/key.pem", "-outform", "DER", "-out", directory + "/key.der"])
        let id = try TestServer.admin(["key", "add", "--container", container, "--user", user, "--public-key", directory + "/pub.pem",
                                       "--data", dataDirectory])
        let der = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/key.der")))
        return ServerKey(id: id, privateKey: try P256.PrivateKey(derRepresentation: der))
    }

    private func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        let processEnd = process.waitForTermination()
        guard processEnd.status == 0 else { throw TestFailure("\(executable) \(arguments) exited \(processEnd.status)") }
    }

    /// A request signed as CloudKit Web Services documents: `date:base64(sha256(body)):subpath`,
    /// where the subpath is the URL path from `/database/1/...` (plus `?query` when `signQuery`).
    /// `signedBody` signs other bytes than those sent; `headers` overrides or removes (empty) headers;
    /// `url` replaces the database URL (other API prefixes).
    func signed(_ method: String, _ operation: String, database: String = "public", body: JSONValue? = nil, key: ServerKey,
                date: Date = Date(), query: String? = nil, signQuery: Bool = false, signedBody: Data? = nil,
                headers overrides: [String: String] = [:], url fullURL: String? = nil) throws -> Response {
        let sent = body.map { Data(JSONWriter.bytes($0)) }
        let url = URL(string: (fullURL ?? databaseURL(operation, database: database)) + (query.map { "?" + $0 } ?? ""))!
        let subpath = url.path + (signQuery ? "?" + (query ?? "") : "")
        let stamp = ISO8601DateFormatter().string(from: date)
        let hash = Data(Digest.sha256([UInt8](signedBody ?? sent ?? Data()))).base64EncodedString()
        let signature = try key.privateKey.signature(for: Array("\(stamp):\(hash):\(subpath)".utf8))
        var headers = ["X-Apple-CloudKit-Request-KeyID": key.id, "X-Apple-CloudKit-Request-ISO8601Date": stamp,
                       "X-Apple-CloudKit-Request-SignatureV1": Data(signature).base64EncodedString(), "Content-Type": "text/plain"]
        for (name, value) in overrides { headers[name] = value.isEmpty ? nil : value }
        return try request(method, url.absoluteString, body: sent, token: .some(nil), headers: headers)
    }
}
