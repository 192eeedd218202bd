import Foundation
import TandemCore

/// A client-side mirror of one zone, kept by fetching `changes/zone` from a token, the way a
/// sync engine does.
struct ZoneMirror {
    var records: [String: JSONValue] = [:]
    var token: String?
    var pages = 0

    /// Fetches until `moreComing` is false; returns the error code if the fetch failed.
    @discardableResult
    mutating func catchUp(_ server: TestServer, zoneID: JSONValue, as person: Person?, database: String = "private",
                          limit: Int = 200) throws -> String? {
        while true {
            var entry: JSONObject = ["zoneID": zoneID]
            if let token { entry["syncToken"] = .string(token) }
            let response = try server.post("changes/zone", ["zones": [.object(entry)], "resultsLimit": .int(Int64(limit))],
                                           as: person, database: database)
            if let code = response.json.serverErrorCode { return code }
            let zone = response.json["zones"]?.arrayValue?.first ?? .null
            if let code = zone.serverErrorCode { return code }
            pages += 1
            for record in zone["records"]?.arrayValue ?? [] {
                guard let name = record["recordName"]?.stringValue else { continue }
                if record["deleted"] == true { records[name] = nil } else { records[name] = record }
            }
            token = zone["syncToken"]?.stringValue
            if zone["moreComing"] != true { return nil }
        }
    }

    /// Record name → value of field `n` of the `Item` records, for comparing with the server.
    var summary: [String: JSONValue] {
        records.filter { $0.value["recordType"] == "Item" }.mapValues { $0["fields"]?["n"]?["value"] ?? .null }
    }
}

extension TestServer {
    /// The zone's current records (name → field `n`), read with records/query.
    func currentState(zone: JSONValue, as person: Person?, database: String = "private", recordType: String = "Item") throws -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        var marker: JSONValue = .null
        repeat {
            var body: JSONObject = ["zoneID": zone, "query": ["recordType": .string(recordType)], "resultsLimit": 200]
            if !marker.isNull { body["continuationMarker"] = marker }
            let response = try post("records/query", .object(body), as: person, database: database).json
            for record in response.records { result[record["recordName"]!.stringValue!] = record["fields"]?["n"]?["value"] ?? .null }
            marker = response["continuationMarker"] ?? .null
        } while !marker.isNull
        return result
    }

    /// changes/database from `token` until `moreComing` is false: (zones, new token) or an error code.
    func databaseFeed(as person: Person, database: String, token: String?) throws -> (zones: [JSONValue], token: String?, error: String?) {
        var zones: [JSONValue] = []
        var token = token
        while true {
            var body: JSONObject = [:]
            if let token { body["syncToken"] = .string(token) }
            let response = try post("changes/database", .object(body), as: person, database: database).json
            if let code = response.serverErrorCode { return (zones, token, code) }
            zones += response["zones"]?.arrayValue ?? []
            token = response["syncToken"]?.stringValue
            if response["moreComing"] != true { return (zones, token, nil) }
        }
    }
}
