import Foundation
import Testing
import TandemCore

/// Every field type saved over HTTP comes back exactly as sent (CloudKit Web Services: Types).
@Suite struct FieldRoundTripTests {
    static let cases: [(String, JSONValue, String)] = [
        ("string", "héllo wörld 👋🏽 \u{0301}", "STRING"),
        ("emptyString", "", "STRING"),
        ("int64Max", .int(Int64.max), "INT64"),
        ("int64Min", .int(Int64.min), "INT64"),
        ("double", 3.141592653589793, "DOUBLE"),
        ("tinyDouble", 1e-300, "DOUBLE"),
        ("timestamp", .int(1_764_000_000_123), "TIMESTAMP"),
        ("bytes", .string(Data((0...255).map { UInt8($0) }).base64EncodedString()), "BYTES"),
        ("reference", ["recordName": "target", "action": "DELETE_SELF"], "REFERENCE"),
        ("location", ["latitude": 48.8584, "longitude": 2.2945, "horizontalAccuracy": 5.0, "verticalAccuracy": 3.0,
                      "altitude": 35.5, "speed": 1.25, "course": 90.0, "timestamp": 1_764_000_000_000], "LOCATION"),
        ("stringList", ["a", "b", "a"], "STRING_LIST"),
        ("int64List", [.int(1), .int(-2), .int(Int64.max)], "INT64_LIST"),
        ("doubleList", [0.5, -1.25], "DOUBLE_LIST"),
        ("timestampList", [.int(0), .int(1_764_000_000_000)], "TIMESTAMP_LIST"),
        ("bytesList", ["AAE=", ""], "BYTES_LIST"),
        ("locationList", [["latitude": 1.0, "longitude": 2.0]], "LOCATION_LIST"),
        ("referenceList", [["recordName": "target", "action": "NONE"]], "REFERENCE_LIST"),
        ("emptyStringList", [], "STRING_LIST"),
        ("emptyInt64List", [], "INT64_LIST"),
    ]

    @Test(arguments: cases.map(\.0))
    func valueRoundTripsExactly(field name: String) throws {
        let server = try Shared.server
        let (_, value, type) = Self.cases.first { $0.0 == name }!
        let zone = try server.makeZone("fields")
        if type.hasPrefix("REFERENCE") { try server.create("target", fields: [:], zone: zone) }
        let recordName = unique("rt")
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: recordName, fields: [name: Body.field(value, type)])], zone: zone))
        #expect(saved.json.record(0).serverErrorCode == nil, "\(saved.text)")
        let fetched = try server.post("records/lookup", Body.lookup([recordName], zone: zone))
        let field = fetched.json.record(0)["fields"]?[name]
        #expect(field?["type"]?.stringValue == type)
        var returned = field?["value"]
        if type.hasPrefix("REFERENCE") { returned = Self.withoutZoneID(returned) }
        #expect(returned == value, "\(fetched.text)")
    }

    static func withoutZoneID(_ value: JSONValue?) -> JSONValue? {
        switch value {
        case .object(var o)?: o["zoneID"] = nil; return .object(o)
        case .array(let items)?: return .array(items.map { withoutZoneID($0)! })
        default: return value
        }
    }

    @Test func typesAreInferredWhenAbsent() throws {
        let server = try Shared.server
        let name = unique("infer")
        let saved = try server.create(name, fields: ["s": ["value": "x"], "i": ["value": 7], "d": ["value": 7.5],
                                                     "l": ["value": ["a", "b"]], "loc": ["value": ["latitude": 1.0, "longitude": 2.0]]])
        let types = ["s", "i", "d", "l", "loc"].map { saved["fields"]?[$0]?["type"]?.stringValue }
        #expect(types == ["STRING", "INT64", "DOUBLE", "STRING_LIST", "LOCATION"])
    }

    static let refusals: [(String, JSONValue, String)] = [
        ("NaN", Body.field("NaN", "DOUBLE"), "finite"),
        ("Infinity", Body.field("Infinity", "DOUBLE"), "finite"),
        ("fraction as INT64", Body.field(1.5, "INT64"), "whole number"),
        ("latitude out of range", Body.field(["latitude": 91.0, "longitude": 0.0], "LOCATION"), "latitude"),
        ("bad base64", Body.field("***", "BYTES"), "base64"),
        ("unknown type", Body.field("x", "COLOR"), "unknown type"),
        ("empty list without type", ["value": []], "needs a 'type'"),
        ("boolean", ["value": true], "booleans"),
        ("string for INT64", Body.field("twelve", "INT64"), "INT64"),
    ]

    @Test(arguments: refusals.map(\.0))
    func badValuesAreRefusedWithAReason(label: String) throws {
        let server = try Shared.server
        let (_, field, reason) = Self.refusals.first { $0.0 == label }!
        let name = unique("bad")
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["f": field])]))
        #expect(response.status == 400)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
        #expect(response.json["reason"]?.stringValue?.contains(reason) == true, "\(response.text)")
        let lookup = try server.post("records/lookup", Body.lookup([name]))
        #expect(lookup.json.record(0).serverErrorCode == "NOT_FOUND")
    }

    @Test func storedFieldsCopiedIntoResponsesMatchFreshlyEncodedOnes() throws {
        let server = try Shared.server
        let zone = try server.makeZone("copy")
        try server.create("target", fields: [:], zone: zone)
        var fields = JSONObject()
        for (name, value, type) in Self.cases { fields[name] = Body.field(value, type) }
        let name = unique("copy")
        try server.create(name, fields: fields, zone: zone)
        let copied = try server.post("records/lookup", Body.lookup([name], zone: zone)).json.record(0)["fields"]
        var body = Body.lookup([name], zone: zone).objectValue!
        body["desiredKeys"] = .array(fields.keys.map(JSONValue.string))
        let encoded = try server.post("records/lookup", .object(body)).json.record(0)["fields"]
        #expect(copied != nil)
        #expect(copied == encoded)
        let queried = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "query": ["recordType": "Note", "filterBy": [
            ["comparator": "EQUALS", "systemFieldName": "recordName", "fieldValue": ["value": .string(name)]]]]]).json.record(0)["fields"]
        #expect(queried == encoded)
    }
}
