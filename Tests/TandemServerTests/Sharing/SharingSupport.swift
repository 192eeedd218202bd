import Foundation
import TandemCore
@testable import TandemServer

/// A user with a token, made with the real `tandem` CLI against a test server's data directory.
struct Person {
    var recordName: String
    var email: String
    var token: String
}

/// A note hierarchy (root `note`, child `child`) shared in its own zone.
struct SharedNote {
    var owner: Person
    var zone: String
    var shareName: String
    var guid: String
    var shareTag: String
    var rootTag: String
    var childTag: String

    var sharedZoneID: JSONValue { ["zoneName": .string(zone), "ownerRecordName": .string(owner.recordName)] }
}

extension TestServer {
    /// A new user (unique email) with a user token.
    func person(_ name: String, phone: String? = nil, discoverable: Bool = false) throws -> Person {
        let email = "\(unique(name).lowercased())@example.com"
        var arguments = ["user", "add", "--email", email, "--name", "\(name.capitalized) Tester", "--data", dataDirectory]
        if let phone { arguments += ["--phone", phone] }
        if discoverable { arguments.append("--discoverable") }
        let recordName = try TestServer.admin(arguments)
        let token = try TestServer.admin(["token", "create", "--user", email, "--data", dataDirectory])
        return Person(recordName: recordName, email: email, token: token)
    }

    func post(_ operation: String, _ body: JSONValue, as person: Person?, database: String) throws -> Response {
        try post(operation, body, token: .some(person?.token), database: database)
    }

    /// POST to `/tandem/1/{container}/development/{operation}`.
    func tandem(_ operation: String, _ body: JSONValue, as person: Person?) throws -> Response {
        try request("POST", "\(baseURL)/tandem/1/\(TestServer.container)/development/\(operation)",
                    body: Data(JSONWriter.bytes(body)), token: .some(person?.token))
    }

    /// Creates a zone, a root note with one child, and a share of the root with `participants`
    /// (lookup info dictionaries with permission/type), all as `owner`; the share's
    /// `cloudkit.title` is `title`.
    func shareNote(owner: Person, participants: [JSONValue] = [], publicPermission: String = "NONE",
                   extraShareKeys: JSONObject = [:], title: String = "Groceries") throws -> SharedNote {
        let zone = unique("shared")
        let zoneResponse = try post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                    as: owner, database: "private")
        guard zoneResponse.status == 200 else { throw TestFailure("zone: \(zoneResponse.text)") }
        var shareKeys: JSONObject = ["forRecord": ["recordName": "note"], "publicPermission": .string(publicPermission),
                                     "participants": .array(participants)]
        for entry in extraShareKeys.entries { shareKeys[entry.key] = entry.value }
        let response = try post("records/modify", Body.modify([
            Body.operation("create", name: "note", fields: ["title": Body.field("Groceries")]),
            Body.operation("create", name: "child", fields: ["title": Body.field("Milk")], extra: ["parent": ["recordName": "note"]]),
            Body.operation("create", name: "share", recordType: "cloudkit.share",
                           fields: ["cloudkit.title": Body.field(.string(title))], extra: shareKeys),
        ], zone: zone), as: owner, database: "private")
        let records = response.json.records
        guard response.status == 200, records.count == 3, records.allSatisfy({ $0.serverErrorCode == nil }),
              let guid = records[2]["shortGUID"]?.stringValue else {
            throw TestFailure("share: \(response.text)")
        }
        return SharedNote(owner: owner, zone: zone, shareName: "share", guid: guid, shareTag: records[2]["recordChangeTag"]!.stringValue!,
                          rootTag: records[0]["recordChangeTag"]!.stringValue!, childTag: records[1]["recordChangeTag"]!.stringValue!)
    }

    /// records/accept by `person`; returns the first result.
    @discardableResult
    func accept(_ note: SharedNote, as person: Person) throws -> JSONValue {
        try post("records/accept", ["shortGUIDs": [["value": .string(note.guid)]]], as: person, database: "public").json["results"]?.arrayValue?.first ?? .null
    }

    func resolve(_ note: SharedNote, as person: Person?, fetchRoot: Bool = false) throws -> Response {
        try post("records/resolve", ["shortGUIDs": [["value": .string(note.guid), "shouldFetchRootRecord": .bool(fetchRoot)]]],
                 as: person, database: "public")
    }

    /// records/lookup in `person`'s shared database, in the note's zone.
    func sharedLookup(_ note: SharedNote, _ names: [String], as person: Person?) throws -> Response {
        try post("records/lookup", ["zoneID": note.sharedZoneID, "records": .array(names.map { ["recordName": .string($0)] })],
                 as: person, database: "shared")
    }

    /// records/modify in `person`'s shared database, in the note's zone.
    func sharedModify(_ note: SharedNote, _ operations: [JSONValue], as person: Person?) throws -> Response {
        try post("records/modify", ["zoneID": note.sharedZoneID, "operations": .array(operations)], as: person, database: "shared")
    }

    /// records/modify in the owner's private database, in the note's zone.
    func ownerModify(_ note: SharedNote, _ operations: [JSONValue]) throws -> Response {
        try post("records/modify", Body.modify(operations, zone: note.zone), as: note.owner, database: "private")
    }

    /// The share record as `person` sees it (owner: private database; others: shared).
    func shareRecord(_ note: SharedNote, as person: Person) throws -> JSONValue {
        let response = person.recordName == note.owner.recordName
            ? try post("records/lookup", Body.lookup([note.shareName], zone: note.zone), as: person, database: "private")
            : try sharedLookup(note, [note.shareName], as: person)
        return response.json.record(0)
    }

    /// The zones in `person`'s shared database.
    func sharedZones(as person: Person) throws -> [String] {
        let response = try get("zones/list", token: .some(person.token), database: "shared")
        return (response.json["zones"]?.arrayValue ?? []).compactMap { $0["zoneID"]?["zoneName"]?.stringValue }
    }
}

enum Invite {
    static func email(_ person: Person, _ permission: String = "READ_ONLY", type: String? = nil) -> JSONValue {
        var o: JSONObject = ["userIdentity": ["lookupInfo": ["emailAddress": .string(person.email)]], "permission": .string(permission)]
        if let type { o["type"] = .string(type) }
        return .object(o)
    }

    static func address(_ email: String, _ permission: String = "READ_ONLY") -> JSONValue {
        ["userIdentity": ["lookupInfo": ["emailAddress": .string(email)]], "permission": .string(permission)]
    }
}
