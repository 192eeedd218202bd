import Foundation
import Testing
import TandemCore

/// The public database under a production schema's grants: each role × read / create / write
/// (spec §5.2; decisions SC3, SC4).
@Suite struct PublicGrantsTests {
    static let schema = """
        DEFINE SCHEMA
            CREATE ROLE moderator;
            RECORD TYPE Post (title STRING QUERYABLE, GRANT READ TO "_world", GRANT CREATE TO "_icloud", GRANT WRITE TO "_creator", GRANT WRITE TO moderator);
            RECORD TYPE Notice (title STRING QUERYABLE, GRANT READ TO "_icloud", GRANT CREATE, WRITE TO moderator);
            RECORD TYPE Diary (title STRING QUERYABLE, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
            RECORD TYPE Users (roles LIST<INT64>, GRANT WRITE TO "_creator", GRANT READ TO "_world");
        """

    enum Role: String, CaseIterable, Sendable { case anonymous, icloud, creator, moderator }
    enum Action: String, CaseIterable, Sendable { case read, create, write }

    /// One container with the schema in production, an existing record of each type made by
    /// `author`, a signed-in stranger and a moderator.
    struct World: @unchecked Sendable {
        var server: TestServer
        var container: String
        var tokens: [Role: String?]

        static let shared: Result<World, any Error> = Result { try World() }

        init() throws {
            let server = try SchemaServer.server
            let container = try server.makeContainer()
            self.server = server
            self.container = container
            guard try server.importSchema(PublicGrantsTests.schema, container: container, environment: "production").status == 0 else {
                throw TestFailure("import failed")
            }
            let author = try server.person("author"), stranger = try server.person("stranger"), moderator = try server.person("moderator")
            func roles(_ person: Person, _ roles: [String]) throws {
                try TestServer.admin(["user", "roles", "--email", person.email, "--container", container, "--environment", "production",
                                      "--data", server.dataDirectory] + (roles.isEmpty ? ["--clear"] : roles))
            }
            try roles(moderator, ["moderator"])
            // The author creates a Notice while a moderator, then loses the role.
            try roles(author, ["moderator"])
            for type in ["Post", "Notice", "Diary"] {
                let item = try server.save("existing-\(type)", type: type, fields: ["title": Body.field("first")], container: container,
                                           environment: "production", database: "public", token: author.token)
                guard item["recordChangeTag"] != nil else { throw TestFailure("seed \(type): \(item)") }
            }
            try roles(author, [])
            tokens = [.anonymous: nil, .icloud: stranger.token, .creator: author.token, .moderator: moderator.token]
        }

        /// Whether `role` could do `action` on a record of `type`; the error code otherwise.
        func attempt(_ action: Action, on type: String, as role: Role) throws -> String? {
            let token = tokens[role]!
            let response: TestServer.Response
            switch action {
            case .read:
                response = try server.post("records/lookup", Body.lookup(["existing-\(type)"]), container: container,
                                           environment: "production", database: "public", token: token)
            case .create:
                response = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("new"), recordType: type,
                                                                                          fields: ["title": Body.field("new")])]),
                                           container: container, environment: "production", database: "public", token: token)
            case .write:
                response = try server.post("records/modify", Body.modify([Body.operation("forceUpdate", name: "existing-\(type)", recordType: type,
                                                                                          fields: ["title": Body.field(.string(unique("edit")))])]),
                                           container: container, environment: "production", database: "public", token: token)
            }
            if response.status != 200 { return response.json.serverErrorCode ?? "HTTP \(response.status)" }
            return response.json.record(0).serverErrorCode
        }
    }

    /// (type, role, rights that role has): every other right must be refused.
    static let matrix: [(String, Role, Set<Action>)] = [
        ("Post", .anonymous, [.read]),
        ("Post", .icloud, [.read, .create]),
        ("Post", .creator, [.read, .create, .write]),
        ("Post", .moderator, [.read, .create, .write]),
        ("Notice", .anonymous, []),
        ("Notice", .icloud, [.read]),
        ("Notice", .creator, [.read]),
        ("Notice", .moderator, [.read, .create, .write]),
        ("Diary", .anonymous, []),
        ("Diary", .icloud, [.create]),
        ("Diary", .creator, [.read, .create, .write]),
        ("Diary", .moderator, [.create]),
    ]

    @Test(arguments: matrix, Action.allCases)
    func grantsDecide(_ entry: (String, Role, Set<Action>), action: Action) throws {
        let world = try World.shared.get()
        let (type, role, rights) = entry
        let outcome = try world.attempt(action, on: type, as: role)
        if rights.contains(action) {
            #expect(outcome == nil, "\(role) \(action) \(type): \(outcome ?? "")")
        } else {
            // Anonymous callers are asked to sign in before a write; everyone else is denied.
            let expected = role == .anonymous && action != .read ? "AUTHENTICATION_REQUIRED" : "ACCESS_DENIED"
            #expect(outcome == expected, "\(role) \(action) \(type)")
        }
    }

    @Test func anonymousQueriesReadWorldReadableTypes() throws {
        let world = try World.shared.get()
        let posts = try world.server.query(["recordType": "Post"], container: world.container, environment: "production", database: "public", token: nil)
        #expect(posts.status == 200, "\(posts.text)")
        #expect(posts.json.records.contains { $0["recordName"]?.stringValue == "existing-Post" })
        let notices = try world.server.query(["recordType": "Notice"], container: world.container, environment: "production", database: "public", token: nil)
        #expect(notices.json.serverErrorCode == "ACCESS_DENIED")
    }

    @Test func creatorOnlyReadsQueryOnlyTheCallersRecords() throws {
        let world = try World.shared.get()
        let stranger = world.tokens[.icloud]!
        _ = try world.server.save(unique("mine"), type: "Diary", fields: ["title": Body.field("mine")], container: world.container,
                                  environment: "production", database: "public", token: stranger)
        let diaries = try world.server.query(["recordType": "Diary"], container: world.container, environment: "production", database: "public",
                                             token: stranger)
        #expect(diaries.status == 200, "\(diaries.text)")
        #expect(!diaries.json.records.isEmpty)
        // The author's diary is not the stranger's: only records the stranger created come back.
        let names = diaries.json.records.compactMap { $0["recordName"]?.stringValue }
        #expect(names.contains { $0.hasPrefix("mine") })
        #expect(!names.contains("existing-Diary"))
    }

    @Test func usersCannotGiveThemselvesRoles() throws {
        let world = try World.shared.get()
        let stranger = try world.server.person("climber")
        let item = try world.server.save(stranger.recordName, type: "Users", fields: ["roles": Body.field([1])], container: world.container,
                                         environment: "production", database: "public", token: stranger.token)
        #expect(item.serverErrorCode == "ACCESS_DENIED")
    }

    @Test func thePublicDatabaseHasOnlyTheDefaultZone() throws {
        let world = try World.shared.get()
        let response = try world.server.post("records/lookup", Body.lookup(["x"], zone: "Custom"), container: world.container,
                                             environment: "production", database: "public", token: world.tokens[.creator]!)
        #expect(response.json.serverErrorCode == "ZONE_NOT_FOUND")
    }
}

/// Regressions from an adversarial review of the schema work.
@Suite struct SchemaHardeningTests {
    @Test("an EXISTS answer carries the server record only to someone who may read it")
    func existsHidesUnreadableRecords() throws {
        let world = try PublicGrantsTests.World.shared.get()
        let stranger = world.tokens[.icloud]!
        let response = try world.server.post("records/modify", Body.modify([Body.operation("create", name: "existing-Diary", recordType: "Post",
                                                                                           fields: ["title": Body.field("mine")])]),
                                             container: world.container, environment: "production", database: "public", token: stranger)
        let item = response.json.record(0)
        #expect(item.serverErrorCode == "EXISTS" || item.serverErrorCode == "ACCESS_DENIED", "\(response.text)")
        #expect(item["serverRecord"] == nil)
        #expect(response.text.contains("first") == false)
    }

    @Test("writes cannot grow a development schema without bound")
    func justInTimeGrowthIsBounded() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let person = try server.person("grower")
        var fields = JSONObject()
        for index in 0..<260 { fields["f\(index)"] = Body.field("x") }
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: "wide", recordType: "Wide", fields: fields)]),
                                       container: container, environment: "development", database: "private", token: person.token)
        #expect(response.json.record(0).serverErrorCode == "LIMIT_EXCEEDED", "\(response.text.prefix(300))")
    }

    @Test("replacing one's own Users record keeps the roles the administrator assigned")
    func usersRecordKeepsRoles() throws {
        let world = try PublicGrantsTests.World.shared.get()
        let moderator = world.tokens[.moderator]!!
        let server = world.server
        let me = try server.request("GET", server.baseURL + "/database/1/\(world.container)/production/public/users/current", token: .some(moderator))
        let name = try #require(me.json["userRecordName"]?.stringValue)
        let replaced = try server.post("records/modify", Body.modify([Body.operation("forceReplace", name: name, recordType: "Users", fields: [:])]),
                                       container: world.container, environment: "production", database: "public", token: moderator)
        #expect(replaced.json.record(0).serverErrorCode == nil || replaced.json.record(0).serverErrorCode == "ACCESS_DENIED", "\(replaced.text)")
        let notice = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("notice"), recordType: "Notice",
                                                                                   fields: ["title": Body.field("still a moderator")])]),
                                     container: world.container, environment: "production", database: "public", token: moderator)
        #expect(notice.json.record(0).serverErrorCode == nil, "\(notice.text)")
    }
}
