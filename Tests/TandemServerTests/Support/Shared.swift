import Foundation
import TandemCore

/// A test server started on first use and kept for the whole run.
final class LazyTestServer: @unchecked Sendable {
    private var instance: TestServer?
    private let lock = NSLock()
    private let arguments: [String]

    init(arguments: [String] = []) {
        self.arguments = arguments
    }

    var server: TestServer {
        get throws {
            lock.lock()
            defer { lock.unlock() }
            if let instance { return instance }
            let server = try TestServer(extraArguments: arguments)
            instance = server
            return server
        }
    }
}

/// One server shared by the end-to-end suites (tests use distinct record and zone names, so
/// they can run in parallel against it).
enum Shared {
    private static let lazy = LazyTestServer()
    static var server: TestServer { get throws { try lazy.server } }
}

/// A fresh name, so parallel tests never collide.
func unique(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8))" }

extension JSONValue {
    /// `records[index]` of a response body.
    func record(_ index: Int) -> JSONValue { self["records"]?.arrayValue?[index] ?? .null }
    var records: [JSONValue] { self["records"]?.arrayValue ?? [] }
    var serverErrorCode: String? { self["serverErrorCode"]?.stringValue }
}

/// Builders for request bodies.
enum Body {
    static func field(_ value: JSONValue, _ type: String? = nil) -> JSONValue {
        var o: JSONObject = ["value": value]
        if let type { o["type"] = .string(type) }
        return .object(o)
    }

    static func operation(_ type: String, name: String?, recordType: String? = "Note", tag: String? = nil,
                          fields: JSONObject? = nil, extra: JSONObject = [:]) -> JSONValue {
        var record = JSONObject()
        if let name { record["recordName"] = .string(name) }
        if let recordType { record["recordType"] = .string(recordType) }
        if let tag { record["recordChangeTag"] = .string(tag) }
        if let fields { record["fields"] = .object(fields) }
        for entry in extra.entries { record[entry.key] = entry.value }
        return ["operationType": .string(type), "record": .object(record)]
    }

    static func modify(_ operations: [JSONValue], zone: String? = nil, atomic: Bool? = nil) -> JSONValue {
        var o: JSONObject = ["operations": .array(operations)]
        if let zone { o["zoneID"] = ["zoneName": .string(zone)] }
        if let atomic { o["atomic"] = .bool(atomic) }
        return .object(o)
    }

    static func lookup(_ names: [String], zone: String? = nil) -> JSONValue {
        var o: JSONObject = ["records": .array(names.map { ["recordName": .string($0)] })]
        if let zone { o["zoneID"] = ["zoneName": .string(zone)] }
        return .object(o)
    }
}

extension TestServer {
    /// Creates a custom zone and returns its name.
    func makeZone(_ prefix: String = "zone") throws -> String {
        let name = unique(prefix)
        let response = try post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(name)]]]]])
        guard response.status == 200 else { throw TestFailure("zone create failed: \(response.text)") }
        return name
    }

    /// Saves one record with `create` and returns the saved record dictionary.
    @discardableResult
    func create(_ name: String, type: String = "Note", fields: JSONObject, zone: String? = nil) throws -> JSONValue {
        let response = try post("records/modify", Body.modify([Body.operation("create", name: name, recordType: type, fields: fields)], zone: zone))
        guard response.status == 200, response.json.record(0)["recordChangeTag"] != nil else {
            throw TestFailure("create \(name) failed: \(response.status) \(response.text)")
        }
        return response.json.record(0)
    }
}
