import Foundation
import Testing
import TandemCore

/// records/modify over HTTP: the seven operation types, conflicts, existence rules and the
/// echo of system fields (CloudKit Web Services: records/modify; decisions D2).
@Suite struct RecordsModifyTests {
    @Test func createReturnsChangeTagCreatedAndModified() throws {
        let server = try Shared.server
        let name = unique("create")
        let saved = try server.create(name, fields: ["title": Body.field("hello")])
        #expect(saved["recordName"]?.stringValue == name)
        #expect(saved["recordType"]?.stringValue == "Note")
        #expect((saved["recordChangeTag"]?.stringValue ?? "").isEmpty == false)
        #expect(saved["created"]?["userRecordName"]?.stringValue == server.userRecordName)
        #expect(saved["modified"]?["timestamp"]?.int64Value != nil)
        #expect(saved["fields"]?["title"]?["value"]?.stringValue == "hello")
        #expect(saved["fields"]?["title"]?["type"]?.stringValue == "STRING")
    }

    @Test func createWithoutRecordNameGetsOne() throws {
        let server = try Shared.server
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: nil, fields: ["n": Body.field(1)])]))
        #expect(response.status == 200)
        #expect((response.json.record(0)["recordName"]?.stringValue ?? "").count == 36)
    }

    @Test func createOfExistingRecordIsExistsWithServerRecord() throws {
        let server = try Shared.server
        let name = unique("exists")
        try server.create(name, fields: ["title": Body.field("first")])
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["title": Body.field("second")])]))
        #expect(response.status == 200)
        let item = response.json.record(0)
        #expect(item.serverErrorCode == "EXISTS")
        #expect(item["recordName"]?.stringValue == name)
        #expect(item["serverRecord"]?["fields"]?["title"]?["value"]?.stringValue == "first")
    }

    @Test func updatePatchesListedFieldsAndKeepsOthers() throws {
        let server = try Shared.server
        let name = unique("update")
        let saved = try server.create(name, fields: ["a": Body.field("one"), "b": Body.field(2)])
        let tag = saved["recordChangeTag"]!.stringValue!
        let response = try server.post("records/modify", Body.modify([Body.operation("update", name: name, recordType: nil, tag: tag, fields: ["a": Body.field("uno")])]))
        let item = response.json.record(0)
        #expect(item["fields"]?["a"]?["value"]?.stringValue == "uno")
        #expect(item["fields"]?["b"]?["value"]?.int64Value == 2)
        #expect(item["recordChangeTag"]?.stringValue != tag)
        #expect(item["created"]?["timestamp"] == saved["created"]?["timestamp"])
    }

    @Test func staleChangeTagReturnsConflictWithServerRecord() throws {
        let server = try Shared.server
        let name = unique("conflict")
        let saved = try server.create(name, fields: ["a": Body.field("v1")])
        let oldTag = saved["recordChangeTag"]!.stringValue!
        _ = try server.post("records/modify", Body.modify([Body.operation("update", name: name, tag: oldTag, fields: ["a": Body.field("v2")])]))
        for type in ["update", "replace", "delete"] {
            let response = try server.post("records/modify", Body.modify([Body.operation(type, name: name, tag: oldTag, fields: ["a": Body.field("v3")])]))
            let item = response.json.record(0)
            #expect(item.serverErrorCode == "CONFLICT", "\(type)")
            #expect(item["serverRecord"]?["fields"]?["a"]?["value"]?.stringValue == "v2", "\(type)")
            #expect(item["serverRecord"]?["recordChangeTag"]?.stringValue != oldTag)
        }
    }

    @Test func forceUpdateIgnoresTagAndCreatesWhenMissing() throws {
        let server = try Shared.server
        let name = unique("forceUpdate")
        let created = try server.post("records/modify", Body.modify([Body.operation("forceUpdate", name: name, fields: ["a": Body.field("x"), "b": Body.field("y")])]))
        #expect(created.json.record(0)["fields"]?["a"]?["value"]?.stringValue == "x")
        let updated = try server.post("records/modify", Body.modify([Body.operation("forceUpdate", name: name, tag: "stale", fields: ["a": Body.field("z")])]))
        #expect(updated.json.record(0)["fields"]?["a"]?["value"]?.stringValue == "z")
        #expect(updated.json.record(0)["fields"]?["b"]?["value"]?.stringValue == "y")
    }

    @Test func replaceClearsUnlistedFields() throws {
        let server = try Shared.server
        let name = unique("replace")
        let saved = try server.create(name, fields: ["a": Body.field("one"), "b": Body.field("two")])
        let response = try server.post("records/modify", Body.modify([Body.operation("replace", name: name, tag: saved["recordChangeTag"]!.stringValue!, fields: ["a": Body.field("uno")])]))
        let fields = response.json.record(0)["fields"]?.objectValue
        #expect(fields?.keys == ["a"])
    }

    @Test func forceReplaceCreatesAndReplacesWithoutTag() throws {
        let server = try Shared.server
        let name = unique("forceReplace")
        _ = try server.post("records/modify", Body.modify([Body.operation("forceReplace", name: name, fields: ["a": Body.field(1), "b": Body.field(2)])]))
        let response = try server.post("records/modify", Body.modify([Body.operation("forceReplace", name: name, fields: ["b": Body.field(3)])]))
        #expect(response.json.record(0)["fields"]?.objectValue?.keys == ["b"])
        #expect(response.json.record(0)["fields"]?["b"]?["value"]?.int64Value == 3)
    }

    @Test func deleteNeedsCurrentTagAndForceDeleteDoesNot() throws {
        let server = try Shared.server
        let a = unique("delete"), b = unique("forceDelete")
        let saved = try server.create(a, fields: ["x": Body.field(1)])
        try server.create(b, fields: ["x": Body.field(1)])
        let deleted = try server.post("records/modify", Body.modify([
            Body.operation("delete", name: a, recordType: nil, tag: saved["recordChangeTag"]!.stringValue!),
            Body.operation("forceDelete", name: b, recordType: nil),
        ]))
        #expect(deleted.status == 200)
        #expect(deleted.json.record(0)["deleted"]?.boolValue == true)
        #expect(deleted.json.record(1)["deleted"]?.boolValue == true)
        let lookup = try server.post("records/lookup", Body.lookup([a, b]))
        #expect(lookup.json.records.map(\.serverErrorCode) == ["NOT_FOUND", "NOT_FOUND"])
    }

    @Test(arguments: ["update", "replace", "delete", "forceDelete"])
    func operationsOnMissingRecordsAreNotFound(type: String) throws {
        let server = try Shared.server
        let response = try server.post("records/modify", Body.modify([Body.operation(type, name: unique("missing"), tag: "1", fields: ["a": Body.field(1)])]))
        #expect(response.status == 200)
        #expect(response.json.record(0).serverErrorCode == "NOT_FOUND")
    }

    @Test func tagCheckedOperationsWithoutTagAreBadRequests() throws {
        let server = try Shared.server
        let response = try server.post("records/modify", Body.modify([Body.operation("update", name: "x", fields: ["a": Body.field(1)])]))
        #expect(response.status == 400)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
        #expect(response.json["reason"]?.stringValue?.contains("recordChangeTag") == true)
    }

    @Test func desiredKeysTrimEchoedFields() throws {
        let server = try Shared.server
        var body = Body.modify([Body.operation("create", name: unique("desired"), fields: ["a": Body.field(1), "b": Body.field(2)])]).objectValue!
        body["desiredKeys"] = ["b"]
        let response = try server.post("records/modify", .object(body))
        #expect(response.json.record(0)["fields"]?.objectValue?.keys == ["b"])
        body["desiredKeys"] = []
        body["operations"] = [Body.operation("create", name: unique("desired"), fields: ["a": Body.field(1)])]
        let none = try server.post("records/modify", .object(body))
        #expect(none.json.record(0)["fields"]?.objectValue?.isEmpty == true)
        #expect(none.json.record(0)["recordChangeTag"] != nil)
    }

    @Test func numbersAsStringsEncodesNumbersAsStrings() throws {
        let server = try Shared.server
        var body = Body.modify([Body.operation("create", name: unique("nas"), fields: ["n": Body.field("9223372036854775807", "INT64"), "d": Body.field(1.5)])]).objectValue!
        body["numbersAsStrings"] = true
        let response = try server.post("records/modify", .object(body))
        #expect(response.json.record(0)["fields"]?["n"]?["value"] == "9223372036854775807")
        #expect(response.json.record(0)["fields"]?["d"]?["value"] == "1.5")
    }

    @Test func oneRecordInTwoOperationsIsRefused() throws {
        let server = try Shared.server
        let name = unique("twice")
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: [:]), Body.operation("forceDelete", name: name)]))
        #expect(response.status == 400)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
    }

    @Test func moreThan200OperationsIsLimitExceeded() throws {
        let server = try Shared.server
        let operations = (0..<201).map { Body.operation("create", name: "many-\($0)-\(UUID().uuidString.prefix(4))", fields: [:]) }
        let response = try server.post("records/modify", Body.modify(operations))
        #expect(response.status == 413)
        #expect(response.json.serverErrorCode == "LIMIT_EXCEEDED")
        let lookup = try server.post("records/lookup", Body.lookup([operations[0]["record"]!["recordName"]!.stringValue!]))
        #expect(lookup.json.record(0).serverErrorCode == "NOT_FOUND")
    }

    @Test func recordOverOneMebibyteIsRefusedAndNotWritten() throws {
        let server = try Shared.server
        let name = unique("big")
        let big = String(repeating: "x", count: (1 << 20) + 10)
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["blob": Body.field(.string(big))])]))
        #expect(response.json.record(0).serverErrorCode == "LIMIT_EXCEEDED")
        let lookup = try server.post("records/lookup", Body.lookup([name]))
        #expect(lookup.json.record(0).serverErrorCode == "NOT_FOUND")
    }

    /// The limit counts each field's name and encoded value (decisions E27 computes it from the
    /// stored text): a record of exactly 1 MiB is saved, one byte more is refused.
    @Test func recordOfExactlyOneMebibyteIsSavedAndOneByteMoreIsNot() throws {
        let server = try Shared.server
        let title = FieldValue.string("a \"quoted\" title, é ✓")
        func size(_ blob: String) -> Int {
            ["blob": FieldValue.string(blob), "title": title].reduce(0) { total, field in
                total + field.key.utf8.count + JSONWriter.bytes(FieldCodec.encodeField(field.value)).count
            }
        }
        let fitting = String(repeating: "x", count: Limits.recordBytes - size(""))
        #expect(size(fitting) == Limits.recordBytes)
        for (blob, saved) in [(fitting, true), (fitting + "x", false)] {
            let name = unique("edge")
            let fields: JSONObject = ["blob": Body.field(.string(blob)), "title": Body.field(FieldCodec.encodeField(title)["value"]!)]
            let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: fields)]))
            #expect(response.json.record(0).serverErrorCode == (saved ? nil : "LIMIT_EXCEEDED"), "\(blob.utf8.count) bytes of blob")
            let lookup = try server.post("records/lookup", Body.lookup([name]))
            #expect(lookup.json.record(0).serverErrorCode == (saved ? nil : "NOT_FOUND"))
        }
    }

    @Test func recordTypeCannotChange() throws {
        let server = try Shared.server
        let name = unique("type")
        try server.create(name, type: "Note", fields: [:])
        let response = try server.post("records/modify", Body.modify([Body.operation("forceUpdate", name: name, recordType: "Task", fields: [:])]))
        #expect(response.json.record(0).serverErrorCode == "BAD_REQUEST")
    }

    @Test func missingCustomZoneIsZoneNotFound() throws {
        let server = try Shared.server
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: "x", fields: [:])], zone: unique("nozone")))
        #expect(response.status == 404)
        #expect(response.json.serverErrorCode == "ZONE_NOT_FOUND")
    }

    @Test func lookupReturnsRecordsAndPerItemNotFound() throws {
        let server = try Shared.server
        let name = unique("lookup")
        try server.create(name, fields: ["a": Body.field(1), "b": Body.field(2)])
        let response = try server.post("records/lookup", ["records": [["recordName": .string(name), "desiredKeys": ["a"]], ["recordName": .string("nope-\(UUID())")]]])
        #expect(response.status == 200)
        #expect(response.json.record(0)["fields"]?.objectValue?.keys == ["a"])
        #expect(response.json.record(1).serverErrorCode == "NOT_FOUND")
        #expect(response.json.record(1)["uuid"]?.stringValue != nil)
    }

    @Test func changeTagsAreNotReusedWhenAZoneIsRecreated() throws {
        let server = try Shared.server
        let zone = try server.makeZone("recreate")
        let first = try server.create("doc", fields: ["v": Body.field("old")], zone: zone)
        let oldTag = try #require(first["recordChangeTag"]?.stringValue)
        _ = try server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": .string(zone)]]]]])
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]])
        let second = try server.create("doc", fields: ["v": Body.field("new")], zone: zone)
        #expect(second["recordChangeTag"]?.stringValue != oldTag)
        let stale = try server.post("records/modify", Body.modify([Body.operation("update", name: "doc", tag: oldTag, fields: ["v": Body.field("lost?")])], zone: zone))
        #expect(stale.json.record(0).serverErrorCode == "CONFLICT")
    }

    @Test func anotherUsersDefaultZoneIsNotWritable() throws {
        let server = try Shared.server
        let email = "\(unique("bob"))@example.com"
        try TestServer.admin(["user", "add", "--email", email, "--data", server.dataDirectory])
        let bob = try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory])
        let body: JSONValue = ["zoneID": ["zoneName": "_defaultZone", "ownerRecordName": .string(server.userRecordName)],
                               "operations": [Body.operation("create", name: unique("intrude"), fields: [:])]]
        let response = try server.post("records/modify", body, token: .some(bob))
        #expect(response.status == 404)
        #expect(response.json.serverErrorCode == "ZONE_NOT_FOUND")
    }
}
