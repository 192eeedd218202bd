import Foundation
import Testing
import TandemCore

/// U+0000 (NUL) in a string the server stores in a text column (names, emails, titles,
/// subscription IDs, display names) is the client's `BAD_REQUEST` (400), and nothing of the
/// request is written, on SQLite and on PostgreSQL alike (decision P62): PostgreSQL `text` cannot
/// hold it (it answered 500 there), and the SQLite store refuses it the same way. Strings kept
/// inside a record's fields (STRING values, a share's `cloudkit.title`; P50) or a timeline
/// event's or a subscription's JSON payload (a message's text, an alert body) keep their NUL,
/// on both stores.
@Suite(.serialized) struct TextWithNULTests {
    /// One server for every row (rows run one at a time: each compares row counts before and after).
    static let fixture = Result { try Fixture() }

    struct Fixture: @unchecked Sendable {
        let server: TestServer
        let ada: Person
        let bob: Person
        let apiToken: String
        let conversation: String
        /// A zone of Ada's, for shares (the default zone holds none).
        let sharedZone: String

        init() throws {
            server = try TestServer(extraArguments: TestServer.cheapHash)
            ada = try server.person("ada")
            bob = try server.person("bob")
            apiToken = try server.apiToken()
            conversation = try server.conversation(ada, with: [bob])
            sharedZone = unique("nulzone")
            let zone = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(sharedZone)]]]]],
                                       as: ada, database: "private")
            guard zone.status == 200 else { throw TestFailure("zone: \(zone.text)") }
        }
    }

    /// A request carrying NUL, and a SQL count over the tables it would write.
    struct Row: Sendable {
        var label: String
        /// 400 (refused, nothing written) or 200 (kept, written), the same on both stores.
        var status = 400
        /// Refused by the store's rule (P62), not by an earlier check of the value's form: the
        /// answer gives P62's reason (before it: 500 on PostgreSQL, 200 on SQLite).
        var byStore = false
        var written: String
        var send: @Sendable (Fixture) throws -> TestServer.Response
    }

    static let nul = "\u{0}"

    static let rows: [Row] = [
        Row(label: "zone name", written: "SELECT count(*) FROM zones") { f in
            try f.server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string("z\(nul)z")]]]]],
                              as: f.ada, database: "private")
        },
        Row(label: "record name", written: "SELECT count(*) FROM records") { f in
            try f.server.post("records/modify", Body.modify([Body.operation("create", name: "n\(nul)n", fields: ["title": Body.field("x")])]),
                              as: f.ada, database: "private")
        },
        Row(label: "record type", written: "SELECT count(*) FROM records") { f in
            try f.server.post("records/modify", Body.modify([Body.operation("create", name: unique("type"), recordType: "No\(nul)te")]),
                              as: f.ada, database: "private")
        },
        Row(label: "share title (a field value)", status: 200, written: "SELECT (SELECT count(*) FROM shares) + (SELECT count(*) FROM records)") { f in
            let root = unique("root")
            return try f.server.post("records/modify", Body.modify([
                Body.operation("create", name: root, fields: ["title": Body.field("Groceries")]),
                Body.operation("create", name: unique("share"), recordType: "cloudkit.share",
                               fields: ["cloudkit.title": Body.field(.string("Groc\(nul)eries"))],
                               extra: ["forRecord": ["recordName": .string(root)], "publicPermission": "NONE", "participants": []]),
            ], zone: f.sharedZone), as: f.ada, database: "private")
        },
        Row(label: "participant email", written: "SELECT (SELECT count(*) FROM share_participants) + (SELECT count(*) FROM records)") { f in
            let root = unique("root")
            return try f.server.post("records/modify", Body.modify([
                Body.operation("create", name: root, fields: ["title": Body.field("Groceries")]),
                Body.operation("create", name: unique("share"), recordType: "cloudkit.share", fields: [:],
                               extra: ["forRecord": ["recordName": .string(root)], "publicPermission": "NONE",
                                       "participants": [Invite.address("x\(nul)@example.com")]]),
            ], zone: f.sharedZone), as: f.ada, database: "private")
        },
        Row(label: "subscription ID", written: "SELECT count(*) FROM subscriptions") { f in
            try f.server.post("subscriptions/modify", ["operations": [["operationType": "create",
                                                                      "subscription": ["subscriptionID": .string("s\(nul)s"), "subscriptionType": "database"]]]],
                              as: f.ada, database: "private")
        },
        Row(label: "subscription alert body (a JSON payload)", status: 200, written: "SELECT count(*) FROM subscriptions") { f in
            try f.server.post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": [
                "subscriptionID": .string(unique("alert")), "subscriptionType": "database", "notificationInfo": ["alertBody": .string("a\(nul)b")]]]]],
                              as: f.ada, database: "private")
        },
        Row(label: "hidden highlight URL", byStore: true, written: "SELECT count(*) FROM hidden_highlights") { f in
            try f.server.tandem("highlights/hide", ["url": .string("https://nul.example/a\(nul)b")], as: f.ada)
        },
        Row(label: "collaboration identifier of a notice clear", byStore: true, written: "SELECT count(*) FROM notice_clears") { f in
            try f.server.tandem("highlights/notices/clear", ["collaborationIdentifier": .string("c\(nul)c")], as: f.ada)
        },
        Row(label: "conversation title", byStore: true, written: "SELECT count(*) FROM conversations") { f in
            try f.server.tandem("conversations/create", ["members": [.string(f.bob.recordName)], "group": true, "title": .string("t\(nul)t")], as: f.ada)
        },
        Row(label: "conversation message text (an event payload)", status: 200, written: "SELECT count(*) FROM conversation_events") { f in
            try f.server.tandem("conversations/messages/send", ["conversation": .string(f.conversation), "text": .string("hi\(nul)there")], as: f.ada)
        },
        Row(label: "contact email", byStore: true, written: "SELECT count(*) FROM contacts") { f in
            try f.server.tandem("conversations/contacts/modify", ["add": [.string("x\(nul)@example.com")]], as: f.ada)
        },
        Row(label: "account display name", byStore: true, written: "SELECT count(*) FROM account_links") { f in
            try f.server.auth("signup", ["email": .string("\(unique("nul"))@example.com".lowercased()), "password": "correct horse",
                                         "name": .string("Ada\(nul)Lovelace")], apiToken: f.apiToken)
        },
        Row(label: "zone name in a lookup", written: "SELECT count(*) FROM zones") { f in
            try f.server.post("records/lookup", Body.lookup(["note"], zone: "z\(nul)z"), as: f.ada, database: "private")
        },
    ]

    @Test(arguments: rows.map(\.label))
    func textWithNULIsRefusedOrKeptAlikeOnBothStores(label: String) throws {
        let f = try Self.fixture.get()
        let row = try #require(Self.rows.first { $0.label == label })
        let before = try f.server.sqlite(row.written)
        let response = try row.send(f)
        #expect(response.status == row.status, "\(label): \(response.text)")
        if row.status == 400 {
            #expect(response.json.serverErrorCode == "BAD_REQUEST", "\(label): \(response.text)")
            #expect(try f.server.sqlite(row.written) == before, "\(label) wrote something")
            if row.byStore {
                #expect(response.json["reason"]?.stringValue?.contains("U+0000") == true, "\(label): \(response.text)")
            }
        } else {
            #expect(!response.text.contains("serverErrorCode"), "\(label): \(response.text)")
            #expect(try f.server.sqlite(row.written) != before, "\(label) wrote nothing")
        }
        #expect(try f.server.request("GET", f.server.baseURL + "/healthz").status == 200)
    }

    /// The exception: a STRING field value keeps its NUL, stored and found by a query, on both stores.
    @Test func aStringFieldValueHoldsNUL() throws {
        let f = try Self.fixture.get()
        let name = unique("nulvalue")
        let value = "a\(Self.nul)b"
        let saved = try f.server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["title": Body.field(.string(value))])]),
                                      as: f.ada, database: "private")
        #expect(saved.status == 200 && saved.json.records.first?.serverErrorCode == nil, "\(saved.text)")
        let found = try f.server.post("records/query", ["query": ["recordType": "Note", "filterBy": [["fieldName": "title", "comparator": "EQUALS",
                                                                                                      "fieldValue": ["value": .string(value)]]]]],
                                      as: f.ada, database: "private")
        #expect(found.status == 200, "\(found.text)")
        #expect(found.json.records.map { $0["recordName"]?.stringValue } == [name], "\(found.text)")
        #expect(found.json.records.first?["fields"]?["title"]?["value"]?.stringValue == value)
    }

    /// A CONTAINS_*_TOKENS operand holding NUL is a 400 on both stores (P67; before it, both
    /// stores searched for the tokens around the NUL), while the same search without it is answered.
    @Test(arguments: ["CONTAINS_ALL_TOKENS", "CONTAINS_ANY_TOKENS"])
    func aFullTextOperandHoldingNULIsRefusedOnBothStores(comparator: String) throws {
        let f = try Self.fixture.get()
        let name = unique("tokens")
        let saved = try f.server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["title": Body.field("apple pie")])]),
                                      as: f.ada, database: "private")
        #expect(saved.status == 200 && saved.json.records.first?.serverErrorCode == nil, "\(saved.text)")
        func search(_ operand: String) throws -> TestServer.Response {
            try f.server.post("records/query", ["query": ["recordType": "Note", "filterBy": [["fieldName": "title", "comparator": .string(comparator),
                                                                                            "fieldValue": ["value": .string(operand)]]]]],
                              as: f.ada, database: "private")
        }
        let plain = try search("apple pie")
        #expect(plain.status == 200, "\(plain.text)")
        #expect(plain.json.records.contains { $0["recordName"]?.stringValue == name }, "\(plain.text)")
        let refused = try search("apple\(Self.nul)pie")
        #expect(refused.status == 400, "\(refused.text)")
        #expect(refused.json.serverErrorCode == "BAD_REQUEST", "\(refused.text)")
        #expect(refused.json["reason"]?.stringValue?.contains("U+0000") == true, "\(refused.text)")
    }
}
