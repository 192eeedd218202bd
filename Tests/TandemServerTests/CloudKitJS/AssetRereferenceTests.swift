import Foundation
import Testing
import TandemCore

/// `assets/rereference` (decisions J9) as CloudKit JS uses it in `saveRecords`: for a field value
/// holding `recordName` + `fieldName` it asks for `{"assets":[{recordName, fieldName,
/// fileChecksum}], zoneID, targetZoneID?}`, reads `assets[i]` and saves that dictionary, as it
/// is, as the field's value in `records/modify`.
@Suite("CloudKit JS: assets/rereference")
struct AssetRereferenceTests {
    /// Uploads `bytes` as `person` (their private database) and returns the receipt dictionary.
    func upload(_ server: TestServer, _ bytes: Data, as person: Person) throws -> JSONValue {
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]], as: person, database: "private")
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue, "\(tokens.text)")
        let uploaded = try server.request("POST", url, body: bytes, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        return try #require(uploaded.json["singleFile"], "\(uploaded.text)")
    }

    /// Saves `name` with `value` in its `photo` field; returns the saved record.
    func save(_ server: TestServer, _ name: String, photo value: JSONValue, as person: Person, zone: String? = nil,
              extra: JSONObject = [:]) throws -> TestServer.Response {
        try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: "Photo",
                                                                      fields: ["photo": Body.field(value, "ASSET")], extra: extra)], zone: zone),
                        as: person, database: "private")
    }

    func bytes(_ seed: UInt8) -> Data { Data((0..<3000).map { UInt8(truncatingIfNeeded: Int($0) &* 7 &+ Int(seed)) }) }

    @Test("a rereferenced asset saved in another record serves the same bytes from that record's downloadURL")
    func rereferenceAndSave() throws {
        let server = try Shared.server
        let owner = try server.person("reref-owner")
        let data = bytes(1)
        let zone = unique("reref")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        let first = try save(server, "r1", photo: try upload(server, data, as: owner), as: owner, zone: zone)
        let checksum = try #require(first.json.record(0)["fields"]?["photo"]?["value"]?["fileChecksum"]?.stringValue, "\(first.text)")
        let response = try server.post("assets/rereference", ["assets": [["recordName": "r1", "fieldName": "photo", "fileChecksum": .string(checksum)]],
                                                              "zoneID": ["zoneName": .string(zone)]], as: owner, database: "private")
        #expect(response.status == 200, "\(response.text)")
        let entry = try #require(response.json["assets"]?.arrayValue?.first, "\(response.text)")
        #expect(entry["fileChecksum"]?.stringValue == checksum && entry["size"]?.int64Value == Int64(data.count), "\(entry)")
        #expect(entry["recordName"] == "r1" && entry["fieldName"] == "photo" && entry["receipt"]?.stringValue != nil, "\(entry)")
        // CloudKit JS substitutes the entry as the field value, recordName and fieldName included.
        let second = try save(server, "r2", photo: entry, as: owner, zone: zone)
        let url = try #require(second.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(second.text)")
        let download = try server.request("GET", url, token: .some(nil))
        #expect(download.status == 200 && download.body == data, "\(download.status)")
    }

    @Test("unknown records, records a stranger cannot read, and fields without that asset are per-entry errors")
    func perEntryErrors() throws {
        let server = try Shared.server
        let owner = try server.person("reref-errors")
        let stranger = try server.person("reref-stranger")
        _ = try save(server, "mine", photo: try upload(server, bytes(2), as: owner), as: owner)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "plain", recordType: "Photo",
                                                                          fields: ["title": Body.field("no asset")])]), as: owner, database: "private")
        let entries: JSONValue = [["recordName": "missing", "fieldName": "photo"], ["recordName": "plain", "fieldName": "title"],
                                  ["recordName": "mine", "fieldName": "photo", "fileChecksum": "not-the-checksum"],
                                  ["recordName": "mine", "fieldName": "photo"]]
        let own = try server.post("assets/rereference", ["assets": entries], as: owner, database: "private")
        let codes = (own.json["assets"]?.arrayValue ?? []).map { $0.serverErrorCode ?? "ok" }
        #expect(codes == ["NOT_FOUND", "BAD_REQUEST", "BAD_REQUEST", "ok"], "\(own.text)")
        // The stranger names the owner's zone: the record might as well not exist.
        let foreign = try server.post("assets/rereference", [
            "assets": [["recordName": "mine", "fieldName": "photo"], ["recordName": "missing", "fieldName": "photo"]],
            "zoneID": ["zoneName": "_defaultZone", "ownerRecordName": .string(owner.recordName)],
            "targetZoneID": ["zoneName": "_defaultZone"],
        ], as: stranger, database: "shared")
        let strangerCodes = (foreign.json["assets"]?.arrayValue ?? []).map { $0.serverErrorCode ?? "ok" }
        #expect(strangerCodes == ["NOT_FOUND", "NOT_FOUND"], "\(foreign.text)")
        #expect(!foreign.text.contains("fileChecksum"), "\(foreign.text)")
        // Writing into a zone of the owner's that the stranger cannot write to is refused whole.
        let target = try server.post("assets/rereference", ["assets": [["recordName": "x", "fieldName": "photo"]],
                                                            "targetZoneID": ["zoneName": "_defaultZone", "ownerRecordName": .string(owner.recordName)]],
                                     as: stranger, database: "private")
        #expect(target.json.serverErrorCode == "ACCESS_DENIED" || target.json.serverErrorCode == "ZONE_NOT_FOUND", "\(target.text)")
        let empty = try server.post("assets/rereference", ["zoneID": ["zoneName": "_defaultZone"]], as: owner, database: "private")
        #expect(empty.status == 400 && empty.json.serverErrorCode == "BAD_REQUEST", "\(empty.text)")
    }

    @Test("a participant rereferences an asset from a shared zone into their own private zone")
    func sharedToPrivate() throws {
        let server = try Shared.server
        let owner = try server.person("reref-sharer")
        let reader = try server.person("reref-reader")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(reader)])
        _ = try server.accept(note, as: reader)
        let data = bytes(3)
        let receipt = try upload(server, data, as: owner)
        let saved = try server.ownerModify(note, [Body.operation("create", name: "pic", recordType: "Photo", fields: ["photo": Body.field(receipt, "ASSET")],
                                                                 extra: ["parent": ["recordName": "note"]])])
        #expect(saved.json.record(0).serverErrorCode == nil, "\(saved.text)")
        let response = try server.post("assets/rereference", ["assets": [["recordName": "pic", "fieldName": "photo"]],
                                                              "zoneID": note.sharedZoneID, "targetZoneID": ["zoneName": "_defaultZone"]],
                                       as: reader, database: "shared")
        let entry = try #require(response.json["assets"]?.arrayValue?.first, "\(response.text)")
        #expect(entry.serverErrorCode == nil, "\(response.text)")
        let copy = try save(server, unique("copy"), photo: entry, as: reader)
        let url = try #require(copy.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(copy.text)")
        let download = try server.request("GET", url, token: .some(nil))
        #expect(download.status == 200 && download.body == data)
        // The receipt was made for the reader's own zone: the owner cannot spend it.
        let stolen = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("stolen"), recordType: "Photo",
                                                                                   fields: ["photo": Body.field(entry, "ASSET")])]),
                                     as: owner, database: "private")
        #expect(stolen.json.record(0).serverErrorCode == "BAD_REQUEST", "\(stolen.text)")
    }
}
