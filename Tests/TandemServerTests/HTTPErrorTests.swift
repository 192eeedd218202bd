import Foundation
import Testing
import TandemCore

/// Bad requests get CloudKit error bodies with the right HTTP status, and the server survives
/// them (DESIGN.md §3, §6).
@Suite struct HTTPErrorTests {
    @Test func malformedJSONNamesLineAndColumn() throws {
        let server = try Shared.server
        let response = try server.request("POST", server.databaseURL("records/modify"), body: Data("{\n  \"operations\": [,]\n}".utf8))
        #expect(response.status == 400)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
        #expect(response.json["reason"]?.stringValue?.contains("line 2") == true, "\(response.text)")
        #expect(response.json["uuid"]?.stringValue != nil)
    }

    static let badBodies: [(String, String)] = [
        ("empty", ""),
        ("array at top", "[1,2]"),
        ("trailing comma", #"{"operations": [],}"#),
        ("comment", "{/* hi */}"),
        ("NaN literal", #"{"operations": [{"operationType": "create", "record": {"recordType": "A", "fields": {"x": {"value": NaN}}}}]}"#),
        ("operations not an array", #"{"operations": {}}"#),
        ("operation without record", #"{"operations": [{"operationType": "create"}]}"#),
        ("unknown operation type", #"{"operations": [{"operationType": "upsert", "record": {"recordType": "A"}}]}"#),
        ("invalid UTF-8", "{\"a\": \"\u{FFFD}\"}"),
        ("field name with system prefix", #"{"operations": [{"operationType": "create", "record": {"recordType": "A", "fields": {"_x": {"value": 1}}}}]}"#),
        ("record name too long", #"{"operations": [{"operationType": "create", "record": {"recordType": "A", "recordName": "\#(String(repeating: "n", count: 256))"}}]}"#),
    ]

    @Test(arguments: badBodies.map(\.0))
    func badBodiesAreBadRequests(label: String) throws {
        let server = try Shared.server
        let body = Self.badBodies.first { $0.0 == label }!.1
        var data = Data(body.utf8)
        if label == "invalid UTF-8" { data = Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]) }
        let response = try server.request("POST", server.databaseURL("records/modify"), body: data)
        #expect(response.status == 400, "\(response.text)")
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
        #expect((response.json["reason"]?.stringValue ?? "").isEmpty == false)
    }

    /// URLSession (curl) sends this body with `Expect: 100-continue` and, on a loaded machine,
    /// may start sending it after the 413 came: the server reads it out before closing (decision
    /// E15), so the client gets the 413 rather than a broken pipe.
    @Test func bodyOverTwoMebibytesIs413AndServerKeepsServing() throws {
        let server = try Shared.server
        let big = Data(repeating: UInt8(ascii: " "), count: (2 << 20) + 1)
        let response = try server.request("POST", server.databaseURL("records/modify"), body: big)
        #expect(response.status == 413)
        #expect(response.json.serverErrorCode == "LIMIT_EXCEEDED")
        #expect(try server.request("GET", server.baseURL + "/healthz").status == 200)
    }

    @Test func wrongContentTypeIs415() throws {
        let server = try Shared.server
        let response = try server.request("POST", server.databaseURL("records/lookup"), body: Data("{}".utf8),
                                          headers: ["Content-Type": "multipart/form-data; boundary=x"])
        #expect(response.status == 415)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
    }

    @Test func textPlainIsAcceptedAsCloudKitsExamplesSendIt() throws {
        let server = try Shared.server
        let response = try server.request("POST", server.databaseURL("records/lookup"), body: Data(JSONWriter.bytes(Body.lookup(["x"]))),
                                          headers: ["Content-Type": "text/plain"])
        #expect(response.status == 200)
    }

    @Test(arguments: ["/nope", "/database/1/", "/database/1/c/development/private/records/upsert", "/database/2/c/development/private/records/modify"])
    func unknownPathsAreNotFound(path: String) throws {
        let server = try Shared.server
        let response = try server.request("POST", server.baseURL + path, body: Data("{}".utf8))
        #expect(response.status == 404)
        #expect(response.json.serverErrorCode == "NOT_FOUND")
    }

    @Test func wrongMethodIs405WithAllow() throws {
        let server = try Shared.server
        let response = try server.request("GET", server.databaseURL("records/modify"))
        #expect(response.status == 405)
        #expect(response.headers["allow"] == "POST")
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
    }

    @Test func badEnvironmentOrDatabaseIsBadRequest() throws {
        let server = try Shared.server
        #expect(try server.request("POST", server.databaseURL("records/lookup", environment: "staging"), body: Data("{}".utf8)).status == 400)
        #expect(try server.request("POST", server.databaseURL("records/lookup", database: "secret"), body: Data("{}".utf8)).status == 400)
    }

    @Test func concurrentGarbageDoesNotCrashTheServer() throws {
        let server = try Shared.server
        let bodies: [Data] = [Data(), Data([0, 1, 2, 255]), Data(String(repeating: "[", count: 100_000).utf8), Data("{\"operations\": [".utf8)]
        DispatchQueue.concurrentPerform(iterations: 40) { i in
            _ = try? server.request("POST", server.databaseURL("records/modify"), body: bodies[i % bodies.count])
        }
        #expect(try server.request("GET", server.baseURL + "/healthz").status == 200)
    }
}
