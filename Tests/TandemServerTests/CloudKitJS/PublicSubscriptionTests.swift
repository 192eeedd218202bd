import Foundation
import Testing
import TandemCore

/// Query subscriptions in the public database (decision J12): CloudKit takes
/// `CKQuerySubscription` there and no other kind. A subscription belongs to its signed-in
/// creator and fires only for records they may READ under the schema's grants; CloudKit JS
/// reads its notification as `ck.qry` with `dbs` 0.
@Suite("Public database: query subscriptions")
struct PublicSubscriptionTests {
    /// Polls the CloudKit JS way until a 200 arrives or `seconds` pass.
    func poll(_ server: TestServer, _ courier: String, seconds: Double = 5) throws -> TestServer.Response {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let wait = max(0.05, min(1, deadline.timeIntervalSinceNow))
            let response = try server.request("GET", courier + "?timeout=\(wait)", token: .some(nil))
            if response.status != 204 || Date() >= deadline { return response }
        }
    }

    func modify(_ server: TestServer, _ operations: [JSONValue], as person: Person?) throws -> TestServer.Response {
        try server.post("subscriptions/modify", ["operations": .array(operations)], as: person, database: "public")
    }

    func create(_ subscription: JSONValue) -> JSONValue { ["operationType": "create", "subscription": subscription] }

    @Test("a query subscription is created, listed and looked up in the public database, as its creator's only")
    func createListLookup() throws {
        let server = try Shared.server
        let person = try server.person("pub-sub-list")
        let other = try server.person("pub-sub-other")
        let id = unique("pub")
        let created = try modify(server, [create(["subscriptionID": .string(id), "subscriptionType": "query",
                                                  "query": ["recordType": "Listing"], "firesOn": ["create", "update"]])], as: person)
        #expect(created.status == 200, "\(created.text)")
        #expect(created.json["subscriptions"]?.arrayValue?.first?["subscriptionID"]?.stringValue == id, "\(created.text)")
        let listed = try server.get("subscriptions/list", token: .some(person.token), database: "public")
        #expect((listed.json["subscriptions"]?.arrayValue ?? []).contains { $0["subscriptionID"]?.stringValue == id }, "\(listed.text)")
        let lookup = try server.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": .string(id)]]], as: person, database: "public")
        #expect(lookup.json["subscriptions"]?.arrayValue?.first?["query"]?["recordType"] == "Listing", "\(lookup.text)")
        // Not in the creator's private database, and not anyone else's.
        let privately = try server.get("subscriptions/list", token: .some(person.token), database: "private")
        #expect(!(privately.json["subscriptions"]?.arrayValue ?? []).contains { $0["subscriptionID"]?.stringValue == id })
        let theirs = try server.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": .string(id)]]], as: other, database: "public")
        #expect(theirs.json["subscriptions"]?.arrayValue?.first?.serverErrorCode == "NOT_FOUND", "\(theirs.text)")
        let deleted = try modify(server, [["operationType": "delete", "subscription": ["subscriptionID": .string(id)]]], as: person)
        #expect(deleted.json["subscriptions"]?.arrayValue?.first?["deleted"] == true, "\(deleted.text)")
    }

    /// (subscription, expected code, words the reason must hold)
    static let refused: [(JSONValue, String, String)] = [
        (["subscriptionID": "z", "subscriptionType": "zone", "zoneID": ["zoneName": "_defaultZone"]], "BAD_REQUEST", "query subscriptions only"),
        (["subscriptionID": "d", "subscriptionType": "database"], "BAD_REQUEST", "query subscriptions only"),
        (["subscriptionID": "q", "subscriptionType": "query", "query": ["recordType": "Listing"], "zoneID": ["zoneName": "Elsewhere"],
          "firesOn": ["create"]], "BAD_REQUEST", "only the default zone"),
    ]

    @Test("zone and database subscriptions, and other zones, are BAD_REQUEST in the public database; nothing is written",
          arguments: 0..<3)
    func refusedKinds(_ index: Int) throws {
        let server = try Shared.server
        let person = try server.person("pub-sub-refused")
        let (subscription, code, words) = Self.refused[index]
        let good: JSONValue = ["subscriptionID": .string(unique("ok")), "subscriptionType": "query", "query": ["recordType": "Listing"],
                               "firesOn": ["create"]]
        let response = try modify(server, [create(good), create(subscription)], as: person)
        #expect(response.status == 400, "\(response.text)")
        #expect(response.json.serverErrorCode == code)
        #expect(response.json["reason"]?.stringValue?.contains(words) == true, "\(response.text)")
        #expect(response.json["uuid"]?.stringValue?.isEmpty == false)
        let listed = try server.get("subscriptions/list", token: .some(person.token), database: "public")
        #expect(!(listed.json["subscriptions"]?.arrayValue ?? []).contains { $0["subscriptionID"] == good["subscriptionID"] }, "\(listed.text)")
    }

    @Test("without signing in, public subscriptions/modify, list and lookup answer AUTHENTICATION_REQUIRED")
    func anonymousRefused() throws {
        let server = try Shared.server
        let responses = [
            try modify(server, [create(["subscriptionType": "query", "query": ["recordType": "Listing"], "firesOn": ["create"]])], as: nil),
            try server.get("subscriptions/list", token: .some(nil), database: "public"),
            try server.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": "x"]]], as: nil, database: "public"),
        ]
        for response in responses {
            #expect(response.status == 421, "\(response.text)")
            #expect(response.json.serverErrorCode == "AUTHENTICATION_REQUIRED", "\(response.text)")
        }
    }

    @Test("a matching public record reaches the creator's long poll as ck.qry with dbs 0 and fo 1; a non-matching one does not")
    func matchingRecordNotifies() throws {
        let server = try Shared.server
        let subscriber = try server.person("pub-sub-watcher")
        let writer = try server.person("pub-sub-writer")
        let type = "Listing" + unique("t").filter(\.isLetter).prefix(6)
        let courier = try server.webcourier(as: subscriber)
        let created = try modify(server, [create(["subscriptionID": "cheap", "subscriptionType": "query",
                                                  "query": ["recordType": .string(type),
                                                            "filterBy": [["fieldName": "price", "comparator": "LESS_THAN",
                                                                          "fieldValue": ["value": 10]]]],
                                                  "firesOn": ["create", "update", "delete"],
                                                  "notificationInfo": ["additionalFields": ["price"]]])], as: subscriber)
        #expect(created.json["subscriptions"]?.arrayValue?.first?.serverErrorCode == nil, "\(created.text)")
        func save(_ name: String, price: Int) throws {
            let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: type,
                                                                                          fields: ["price": Body.field(.int(Int64(price)))])]),
                                           as: writer, database: "public")
            #expect(response.json.record(0).serverErrorCode == nil, "\(response.text)")
        }
        try save(unique("dear"), price: 500)
        let cheap = unique("cheap")
        try save(cheap, price: 3)
        let response = try poll(server, courier)
        #expect(response.status == 200, "\(response.text)")
        let qry = response.json["ck"]?["qry"]
        #expect(qry?["sid"] == "cheap", "\(response.text)")
        #expect(qry?["dbs"] == 0)
        #expect(qry?["fo"] == 1)
        #expect(qry?["rid"]?.stringValue == cheap, "the non-matching record came first: \(response.text)")
        #expect(qry?["zid"] == "_defaultZone")
        #expect(qry?["af"] == ["price": 3])
        // Nothing else is queued: the record that does not match sent nothing.
        let idle = try server.request("GET", courier + "?timeout=0.3", token: .some(nil))
        #expect(idle.status == 204, "\(idle.text)")
        // Tandem's own format says the scope in words.
        try save(unique("cheap"), price: 1)
        let batch = try server.notifications(at: courier, count: 1)
        #expect(batch.first?["databaseScope"] == "PUBLIC", "\(batch)")
        #expect(batch.first?["queryNotificationReason"] == "recordCreated")
    }

    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE Post (title STRING QUERYABLE, GRANT READ TO "_world", GRANT CREATE TO "_icloud", GRANT WRITE TO "_creator");
            RECORD TYPE Diary (title STRING QUERYABLE, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
        """

    @Test("a record its subscriber may not READ under the schema's grants does not notify; their own record of the type does")
    func grantsDecide() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        guard try server.importSchema(Self.schema, container: container, environment: "production").status == 0 else {
            throw TestFailure("import failed")
        }
        let subscriber = try server.person("pub-grant-watcher")
        let author = try server.person("pub-grant-author")
        let token = try server.request("POST", "\(server.baseURL)/database/1/\(container)/production/tokens/create",
                                       body: Data(#"{"apnsEnvironment":"production"}"#.utf8), token: .some(subscriber.token))
        guard let courier = token.json["webcourierURL"]?.stringValue else { throw TestFailure("tokens/create: \(token.text)") }
        for type in ["Post", "Diary"] {
            let response = try server.post("subscriptions/modify", ["operations": [create([
                "subscriptionID": .string(type), "subscriptionType": "query", "query": ["recordType": .string(type)],
                "firesOn": ["create", "update", "delete"]])]], container: container, environment: "production", database: "public",
                token: subscriber.token)
            #expect(response.json["subscriptions"]?.arrayValue?.first?.serverErrorCode == nil, "\(response.text)")
        }
        func save(_ type: String, as person: Person) throws -> (name: String, tag: String) {
            let name = unique(type.lowercased())
            let saved = try server.save(name, type: type, fields: ["title": Body.field("t")], container: container,
                                        environment: "production", database: "public", token: person.token)
            guard let tag = saved["recordChangeTag"]?.stringValue else { throw TestFailure("save \(type): \(saved)") }
            return (name, tag)
        }
        func delete(_ record: (name: String, tag: String), as person: Person) throws {
            let response = try server.post("records/modify", Body.modify([Body.operation("delete", name: record.name, recordType: nil, tag: record.tag)]),
                                           container: container, environment: "production", database: "public", token: person.token)
            #expect(response.json.record(0).serverErrorCode == nil, "\(response.text)")
        }
        // The author's diary first, then a post: only the post reaches the subscriber.
        let theirs = try save("Diary", as: author)
        let post = try save("Post", as: author)
        let first = try server.notifications(at: courier, count: 2, seconds: 2)
        #expect(first.map { $0["subscriptionID"]?.stringValue } == ["Post"], "\(first)")
        #expect(first.first?["recordName"]?.stringValue == post.name)
        #expect(first.first?["databaseScope"] == "PUBLIC")
        // A diary of their own they may read (`_creator`): it notifies, and so does its deletion;
        // the author's diary deleted does not.
        let mine = try save("Diary", as: subscriber)
        let second = try server.notifications(at: courier, count: 1)
        #expect(second.map { $0["recordName"]?.stringValue } == [mine.name], "\(second)")
        #expect(second.first?["subscriptionID"] == "Diary")
        try delete(theirs, as: author)
        try delete(mine, as: subscriber)
        let third = try server.notifications(at: courier, count: 2, seconds: 2)
        #expect(third.map { $0["recordName"]?.stringValue } == [mine.name], "\(third)")
        #expect(third.first?["queryNotificationReason"] == "recordDeleted")
    }

    @Test("POST public/users/lookup/contacts answers {\"users\": []}; a 'contacts' that is not an array is BAD_REQUEST")
    func contactsLookup() throws {
        let server = try Shared.server
        let person = try server.person("pub-contacts")
        let found = try server.post("users/lookup/contacts", ["contacts": [["firstName": "A", "emailAddresses": [.string(person.email)]]]],
                                    as: person, database: "public")
        #expect(found.status == 200, "\(found.text)")
        #expect(found.json == ["users": []], "\(found.text)")
        let bad = try server.post("users/lookup/contacts", ["contacts": "everyone"], as: person, database: "public")
        #expect(bad.status == 400)
        #expect(bad.json.serverErrorCode == "BAD_REQUEST", "\(bad.text)")
    }
}
