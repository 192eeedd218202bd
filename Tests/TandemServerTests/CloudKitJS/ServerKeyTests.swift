import Foundation
import Testing
import TandemCore
import TandemTestSupport
import TandemCrypto

/// Server-to-server keys (decisions J7–J9), as CloudKit Web Services documents them and CloudKit
/// JS in node sends them (`X-Apple-CloudKit-Request-KeyID`, `-ISO8601Date`, `-SignatureV1`).
/// Keys are made with the openssl command line and `tandem key add`; requests are signed here
/// with the private key.
@Suite("CloudKit JS: server-to-server keys")
struct ServerKeyTests {
    static func create(_ name: String) -> JSONValue {
        Body.modify([Body.operation("create", name: name, recordType: "Note", fields: ["title": Body.field("from a server")])])
    }

    @Test("a request signed over the bare path saves in the public database as the key's user")
    func barePath() throws {
        let server = try Shared.server
        let owner = try server.person("s2s-bare")
        let key = try server.serverKey(user: owner.email)
        #expect(key.id.count == 64 && key.id.allSatisfy(\.isHexDigit), "\(key.id)")
        let name = unique("s2s")
        let response = try server.signed("POST", "records/modify", body: Self.create(name), key: key)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json.record(0)["created"]?["userRecordName"]?.stringValue == owner.recordName, "\(response.text)")
        // The record is there for others to read, created by the key's user.
        let read = try server.post("records/lookup", Body.lookup([name]), database: "public")
        #expect(read.json.record(0)["created"]?["userRecordName"]?.stringValue == owner.recordName, "\(read.text)")
    }

    @Test("a signature over the path with its query (as CloudKit JS in node signs) is accepted, encoded or not")
    func pathWithQuery() throws {
        let server = try Shared.server
        let owner = try server.person("s2s-query")
        let key = try server.serverKey(user: owner.email)
        for query in ["ckjsBuildVersion=2.6.4&ckjsVersion=2.6.4", "note=a%20b"] {
            let response = try server.signed("POST", "records/modify", body: Self.create(unique("q")), key: key, query: query, signQuery: true)
            #expect(response.status == 200, "\(query): \(response.text)")
        }
        // CloudKit JS signs the query unencoded: "note=a b" for note=a%20b.
        let url = URL(string: server.databaseURL("records/modify", database: "public") + "?note=a%20b")!
        let stamp = ISO8601DateFormatter().string(from: Date())
        let body = Data(JSONWriter.bytes(Self.create(unique("raw"))))
        let hash = Data(Digest.sha256([UInt8](body))).base64EncodedString()
        let signature = try key.privateKey.signature(for: Array("\(stamp):\(hash):\(url.path)?note=a b".utf8))
        let response = try server.request("POST", url.absoluteString, body: body, token: .some(nil), headers: [
            "X-Apple-CloudKit-Request-KeyID": key.id, "X-Apple-CloudKit-Request-ISO8601Date": stamp,
            "X-Apple-CloudKit-Request-SignatureV1": Data(signature).base64EncodedString()])
        #expect(response.status == 200, "\(response.text)")
    }

    @Test("GET users/caller signed with the empty body's hash answers the key's user")
    func getWithEmptyBody() throws {
        let server = try Shared.server
        let owner = try server.person("s2s-get")
        let key = try server.serverKey(user: owner.email)
        let response = try server.signed("GET", "users/caller", key: key)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["userRecordName"]?.stringValue == owner.recordName, "\(response.text)")
    }

    /// What each broken request is refused with: always 401 AUTHENTICATION_FAILED, with a reason
    /// naming the problem, and nothing written.
    enum Broken: String, CaseIterable, CustomStringConvertible {
        case bodyChangedByAByte, elevenMinutesOld, elevenMinutesAhead, unknownKey, revokedKey, privateDatabase, sharedDatabase
        case garbageSignature, missingSignature, missingDate, missingKeyID, badDate, otherContainersKey
        var description: String { rawValue }
    }

    static let reasons: [Broken: String] = [
        .bodyChangedByAByte: "signature does not match", .elevenMinutesOld: "seconds old", .elevenMinutesAhead: "seconds ahead",
        .unknownKey: "no server-to-server key", .revokedKey: "was revoked", .privateDatabase: "public database only",
        .sharedDatabase: "public database only", .garbageSignature: "signature", .missingSignature: "X-Apple-CloudKit-Request-SignatureV1",
        .missingDate: "X-Apple-CloudKit-Request-ISO8601Date", .missingKeyID: "X-Apple-CloudKit-Request-KeyID",
        .badDate: "ISO 8601", .otherContainersKey: "no server-to-server key",
    ]

    @Test("broken signed requests are 401 AUTHENTICATION_FAILED with a reason, and write nothing", arguments: Broken.allCases)
    func refused(_ broken: Broken) throws {
        let server = try Shared.server
        let owner = try server.person("s2s-broken")
        let key = try server.serverKey(user: owner.email)
        let name = unique("broken")
        let body = Self.create(name)
        let response: TestServer.Response
        switch broken {
        case .bodyChangedByAByte:
            var bytes = JSONWriter.bytes(body)
            bytes[bytes.count - 2] ^= 0x01
            response = try server.signed("POST", "records/modify", body: body, key: key, signedBody: Data(bytes))
        case .elevenMinutesOld:
            response = try server.signed("POST", "records/modify", body: body, key: key, date: Date().addingTimeInterval(-660))
        case .elevenMinutesAhead:
            response = try server.signed("POST", "records/modify", body: body, key: key, date: Date().addingTimeInterval(660))
        case .unknownKey:
            response = try server.signed("POST", "records/modify", body: body, key: ServerKey(id: String(repeating: "ab", count: 32),
                                                                                              privateKey: key.privateKey))
        case .revokedKey:
            try TestServer.admin(["key", "revoke", key.id, "--data", server.dataDirectory])
            response = try server.signed("POST", "records/modify", body: body, key: key)
        case .privateDatabase:
            response = try server.signed("POST", "records/modify", database: "private", body: body, key: key)
        case .sharedDatabase:
            response = try server.signed("POST", "records/query", database: "shared", body: ["query": ["recordType": "Note"]], key: key)
        case .garbageSignature:
            response = try server.signed("POST", "records/modify", body: body, key: key,
                                         headers: ["X-Apple-CloudKit-Request-SignatureV1": "bm90IGEgc2lnbmF0dXJl"])
        case .missingSignature:
            response = try server.signed("POST", "records/modify", body: body, key: key, headers: ["X-Apple-CloudKit-Request-SignatureV1": ""])
        case .missingDate:
            response = try server.signed("POST", "records/modify", body: body, key: key, headers: ["X-Apple-CloudKit-Request-ISO8601Date": ""])
        case .missingKeyID:
            // With a user's token as well: the broken signature is not skipped in favour of the token.
            response = try server.signed("POST", "records/modify", body: body, key: key,
                                         headers: ["X-Apple-CloudKit-Request-KeyID": "", "Authorization": "Bearer \(owner.token)"])
        case .badDate:
            response = try server.signed("POST", "records/modify", body: body, key: key,
                                         headers: ["X-Apple-CloudKit-Request-ISO8601Date": "yesterday"])
        case .otherContainersKey:
            let other = unique("iCloud.com.example.s2s")
            try TestServer.admin(["container", "create", other, "--data", server.dataDirectory])
            let foreign = try server.serverKey(user: owner.email, container: other)
            response = try server.signed("POST", "records/modify", body: body, key: foreign)
        }
        #expect(response.status == 401, "\(broken): \(response.status) \(response.text)")
        #expect(response.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(broken): \(response.text)")
        let reason = response.json["reason"]?.stringValue ?? ""
        #expect(reason.contains(Self.reasons[broken]!), "\(broken): \(reason)")
        let read = try server.post("records/lookup", Body.lookup([name]), database: "public")
        #expect(read.json.record(0).serverErrorCode == "NOT_FOUND", "\(broken) wrote: \(read.text)")
    }

    @Test("an unknown key is refused before the body is read: a 2 MiB body declared but never sent still gets its answer")
    func unknownKeyRefusedAtAdmission() throws {
        let server = try Shared.server
        let owner = try server.person("s2s-admission")
        let key = try server.serverKey(user: owner.email)
        let stamp = ISO8601DateFormatter().string(from: Date())
        let path = URL(string: server.databaseURL("records/modify", database: "public"))!.path
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 2000000\r\n" +
            "X-Apple-CloudKit-Request-KeyID: \(String(repeating: "cd", count: 32))\r\nX-Apple-CloudKit-Request-ISO8601Date: \(stamp)\r\n" +
            "X-Apple-CloudKit-Request-SignatureV1: AAAA\r\n\r\n"
        let socket = try RawSocket(port: server.port)
        socket.send(head)
        let reply = socket.readUntilClosed(seconds: 5)
        #expect(reply.status == 401, "\(reply.text.prefix(300))")
        #expect(reply.body.contains("no server-to-server key"), "\(reply.text)")
        #expect(reply.closed && reply.seconds < 3, "answered and closed without waiting for the body (\(reply.seconds) s)")
        _ = key
    }

    /// The authorization matrix of server-to-server keys: each database endpoint CloudKit JS
    /// calls, in each database, signed correctly with a working key. As at Apple, only the public
    /// database answers; elsewhere the signature is refused, not ignored.
    static let matrix: [(label: String, method: String, operation: String, database: String, body: JSONValue?, expected: String)] = [
        ("users/caller public", "GET", "users/caller", "public", nil, "ok"),
        ("users/current public", "GET", "users/current", "public", nil, "ok"),
        ("records/query public", "POST", "records/query", "public", ["query": ["recordType": "Note"]], "ok"),
        ("records/lookup public", "POST", "records/lookup", "public", ["records": [["recordName": "nothing-here"]]], "ok"),
        ("users/lookup/email public", "POST", "users/lookup/email", "public", ["users": [["emailAddress": "nobody@example.com"]]], "ok"),
        ("users/discover public", "GET", "users/discover", "public", nil, "ok"),
        ("records/resolve public", "POST", "records/resolve", "public", ["shortGUIDs": [["value": "no-such-guid"]]], "ok"),
        ("zones/list private", "GET", "zones/list", "private", nil, "AUTHENTICATION_FAILED"),
        ("records/query private", "POST", "records/query", "private", ["query": ["recordType": "Note"]], "AUTHENTICATION_FAILED"),
        ("changes/database private", "POST", "changes/database", "private", [:], "AUTHENTICATION_FAILED"),
        ("zones/list shared", "GET", "zones/list", "shared", nil, "AUTHENTICATION_FAILED"),
        ("records/modify shared", "POST", "records/modify", "shared", ["operations": []], "AUTHENTICATION_FAILED"),
        ("device tokens/create", "POST", "", "", ["apnsEnvironment": "development"], "AUTHENTICATION_FAILED"),
        ("tandem/1 shares/requestAccess", "POST", "", "", ["shortGUIDs": [["value": "x"]]], "AUTHENTICATION_FAILED"),
    ]

    @Test("server-to-server key × database endpoint", arguments: matrix.map(\.label))
    func authorization(_ label: String) throws {
        let row = Self.matrix.first { $0.label == label }!
        let server = try Shared.server
        let owner = try server.person("s2s-matrix")
        let key = try server.serverKey(user: owner.email)
        let url: String? = switch label {
        case "device tokens/create": "\(server.baseURL)/device/1/\(TestServer.container)/development/tokens/create"
        case "tandem/1 shares/requestAccess": "\(server.baseURL)/tandem/1/\(TestServer.container)/development/shares/requestAccess"
        default: nil
        }
        let response = try server.signed(row.method, row.operation, database: row.database, body: row.body, key: key, url: url)
        let outcome = response.json.serverErrorCode ?? (response.status == 200 ? "ok" : "HTTP \(response.status)")
        #expect(outcome == row.expected, "\(label): \(response.status) \(response.text.prefix(300))")
    }

    @Test("tandem key list shows keys and their state, and refuses an unknown container; revoking twice is NOT_FOUND")
    func keyCommands() throws {
        let server = try Shared.server
        let owner = try server.person("s2s-cli")
        let container = unique("iCloud.com.example.keys")
        try TestServer.admin(["container", "create", container, "--data", server.dataDirectory])
        let first = try server.serverKey(user: owner.email, container: container)
        let second = try server.serverKey(user: owner.email, container: container)
        try TestServer.admin(["key", "revoke", first.id, "--data", server.dataDirectory])
        let list = try runTandem(["key", "list", "--container", container, "--data", server.dataDirectory])
        let lines = list.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.count == 2, "\(list.output)")
        #expect(lines.first { $0.first == first.id }?.last?.hasPrefix("revoked=") == true, "\(list.output)")
        #expect(lines.first { $0.first == second.id }?.last == "active", "\(list.output)")
        #expect(lines.allSatisfy { $0.dropFirst().first == owner.recordName }, "\(list.output)")
        let again = try runTandem(["key", "revoke", first.id, "--data", server.dataDirectory])
        #expect(again.status == 1 && again.error.contains("no unrevoked server-to-server key"), "\(again)")
        let notAKey = FileManager.default.temporaryDirectory.appendingPathComponent(unique("notakey") + ".pem")
        try Data("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n".utf8).write(to: notAKey)
        defer { try? FileManager.default.removeItem(at: notAKey) }
        let bad = try runTandem(["key", "add", "--container", container, "--user", owner.email, "--public-key", notAKey.path,
                                 "--data", server.dataDirectory])
        #expect(bad.status == 1 && bad.error.contains("not a P-256 public key"), "\(bad)")
        // An unknown container is an error, not an empty list (as `tandem app list`, F43).
        let unknown = try runTandem(["key", "list", "--container", container + ".missing", "--data", server.dataDirectory])
        #expect(unknown.status == 1 && unknown.error.contains("no container '\(container).missing'") && unknown.output.isEmpty, "\(unknown)")
    }
}
