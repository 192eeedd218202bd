import Foundation
import Testing
import TandemCore
import TandemSchema
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// User records of the public database belong to the server (decisions SC4, SC12): nobody can
/// take a user's name first, and nobody but the administrator can give or take roles.
@Suite struct UserRecordTests {
    static let schema = """
        DEFINE SCHEMA
            CREATE ROLE moderator;
            RECORD TYPE Notice (title STRING QUERYABLE, GRANT READ TO "_icloud", GRANT CREATE, WRITE TO moderator);
            RECORD TYPE Users (roles LIST<INT64>, GRANT WRITE TO "_creator", GRANT READ TO "_world");
        """

    /// A development container (just-in-time types get `CREATE` for `_icloud`), with the schema above.
    struct Setup {
        var server: TestServer
        var container: String

        init() throws {
            server = try SchemaServer.server
            container = try server.makeContainer("iCloud.com.example.users")
            guard try server.importSchema(UserRecordTests.schema, container: container, environment: "development").status == 0 else {
                throw TestFailure("import failed")
            }
        }

        func roles(_ person: Person, _ roles: [String]) throws {
            try TestServer.admin(["user", "roles", "--email", person.email, "--container", container, "--environment", "development",
                                  "--data", server.dataDirectory] + (roles.isEmpty ? ["--clear"] : roles))
        }

        func modify(_ operation: JSONValue, as person: Person) throws -> JSONValue {
            let response = try server.post("records/modify", Body.modify([operation]), container: container, database: "public",
                                           token: person.token)
            return response.status == 200 ? response.json.record(0) : response.json
        }

        /// Whether `person` may create a moderators' Notice (the role applies).
        func isModerator(_ person: Person) throws -> Bool {
            let item = try modify(Body.operation("create", name: unique("notice"), recordType: "Notice",
                                                 fields: ["title": Body.field("hello")]), as: person)
            return item.serverErrorCode == nil
        }
    }

    /// Ways a client could try to put a record at another user's name first.
    static let squats: [(operation: String, recordType: String)] = [
        ("create", "Users"), ("create", "Post"), ("forceUpdate", "Users"), ("forceUpdate", "Post"),
        ("forceReplace", "Users"), ("forceReplace", "Post"),
    ]

    @Test("no client can create a record at a user's name, whatever its type", arguments: squats)
    func squattingAUserRecordIsRefused(_ squat: (operation: String, recordType: String)) throws {
        let setup = try Setup()
        let squatter = try setup.server.person("squatter"), victim = try setup.server.person("victim")
        let item = try setup.modify(Body.operation(squat.operation, name: victim.recordName, recordType: squat.recordType,
                                                   fields: ["title": Body.field("mine")]), as: squatter)
        #expect(item.serverErrorCode == "ACCESS_DENIED", "\(squat): \(item)")
        // Not even one's own: user records are made by the server.
        let own = try setup.modify(Body.operation(squat.operation, name: squatter.recordName, recordType: squat.recordType,
                                                  fields: ["title": Body.field("mine")]), as: squatter)
        #expect(own.serverErrorCode == "ACCESS_DENIED", "own \(squat): \(own)")
        // The administrator's assignment then lands in a real Users record and applies.
        try setup.roles(victim, ["moderator"])
        #expect(try setup.isModerator(victim))
    }

    @Test("a Users record cannot be created at any name")
    func usersRecordsAreTheServers() throws {
        let setup = try Setup()
        let person = try setup.server.person("maker")
        let item = try setup.modify(Body.operation("create", name: unique("users"), recordType: "Users", fields: [:]), as: person)
        #expect(item.serverErrorCode == "ACCESS_DENIED", "\(item)")
    }

    /// Operations a user could use to undo their roles, or another's.
    static let undos: [(operation: String, own: Bool)] = [
        ("forceDelete", true), ("delete", true), ("forceReplace", true), ("replace", true),
        ("forceDelete", false), ("forceReplace", false), ("forceUpdate", false),
    ]

    @Test("no client can delete, replace or rewrite a user record, and the role stays", arguments: undos)
    func assignedRolesCannotBeUndone(_ undo: (operation: String, own: Bool)) throws {
        let setup = try Setup()
        let moderator = try setup.server.person("moderator"), other = try setup.server.person("other")
        try setup.roles(moderator, ["moderator"])
        let lookup = try setup.server.post("records/lookup", Body.lookup([moderator.recordName]), container: setup.container,
                                           database: "public", token: moderator.token)
        let tag = try #require(lookup.json.record(0)["recordChangeTag"]?.stringValue, "\(lookup.text)")
        let actor = undo.own ? moderator : other
        let item = try setup.modify(Body.operation(undo.operation, name: moderator.recordName, recordType: "Users", tag: tag,
                                                   fields: ["note": Body.field("x")]), as: actor)
        #expect(item.serverErrorCode == "ACCESS_DENIED", "\(undo): \(item)")
        #expect(try setup.isModerator(moderator), "\(undo)")
    }

    @Test("a user may update their own record's other fields; the roles stay")
    func ownRecordKeepsRolesOnUpdate() throws {
        let setup = try Setup()
        let moderator = try setup.server.person("moderator")
        try setup.roles(moderator, ["moderator"])
        let item = try setup.modify(Body.operation("forceUpdate", name: moderator.recordName, recordType: "Users",
                                                   fields: ["nickname": Body.field("mod")]), as: moderator)
        #expect(item.serverErrorCode == nil, "\(item)")
        #expect(try setup.isModerator(moderator))
    }

    @Test("a DELETE_SELF cascade cannot delete a user record")
    func cascadeCannotDeleteAUserRecord() throws {
        let setup = try Setup()
        let moderator = try setup.server.person("moderator")
        try setup.roles(moderator, ["moderator"])
        let anchor = unique("anchor")
        #expect(try setup.modify(Body.operation("create", name: anchor, recordType: "Post", fields: ["title": Body.field("a")]),
                                 as: moderator).serverErrorCode == nil)
        let reference: JSONValue = ["recordName": .string(anchor), "action": "DELETE_SELF"]
        let linked = try setup.modify(Body.operation("forceUpdate", name: moderator.recordName, recordType: "Users",
                                                     fields: ["anchor": Body.field(reference, "REFERENCE")]), as: moderator)
        #expect(linked.serverErrorCode == nil, "\(linked)")
        let deleted = try setup.modify(Body.operation("forceDelete", name: anchor, recordType: "Post"), as: moderator)
        #expect(deleted.serverErrorCode == "ACCESS_DENIED", "\(deleted)")
        #expect(try setup.isModerator(moderator))
    }
}

/// `tandem user roles` says what applies, and fails when the assignment cannot apply.
@Suite final class UserRolesCommandTests {
    let directory = NSTemporaryDirectory() + "tandem-roles-" + UUID().uuidString
    let container = "iCloud.com.example.roles"

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A data directory with the schema, a victim and a squatter, and a record of `type` made
    /// by the squatter at the victim's name, as clients could before SC12.
    func squatted(type: String) throws -> (victim: UserAccount, squatter: UserAccount) {
        let store = try dataDirectoryStore(directory)
        defer { store.close() }
        _ = try Admin.createContainer(container, store: store)
        _ = try SchemaService(store: store).importSchema(UserRecordTests.schema, file: "roles.ckdb", container: container,
                                                         environment: .development)
        let victim = try Admin.addUser(email: "victim@example.com", name: nil, phone: nil, discoverable: false, store: store)
        let squatter = try Admin.addUser(email: "squatter@example.com", name: nil, phone: nil, discoverable: false, store: store)
        let scope = DatabaseScope(container: container, environment: .development, database: .public, owner: DatabaseScope.publicOwner)
        try store.write { tx in
            let zone = try tx.ensureZone(scope, name: ZoneID.defaultZoneName, at: 1)
            let sequence = try tx.nextChangeSequence(zone)
            let stamp = Record.Stamp(timestamp: 1, userRecordName: squatter.recordName)
            let record = Record(recordName: victim.recordName, recordType: type, recordChangeTag: "1-1", fields: ["title": .string("mine")],
                                zoneID: zone.zoneID, created: stamp, modified: stamp)
            try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
        }
        return (victim, squatter)
    }

    func roles(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try runTandem(["user", "roles", "--email", "victim@example.com", "--container", container, "--environment", "development",
                       "--data", directory] + arguments)
    }

    @Test("a record of another type at the user's name makes the command fail, until --replace")
    func squatOfAnotherTypeFailsLoudly() throws {
        _ = try squatted(type: "Post")
        let refused = try roles(["moderator"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("'Post' record"), "\(refused.error)")
        #expect(refused.error.contains("--replace"), "\(refused.error)")
        #expect(!refused.output.contains("moderator"), "\(refused.output)")
        #expect(try roles([]).output.hasSuffix(": none\n"))
        let replaced = try roles(["moderator", "--replace"])
        #expect(replaced.status == 0, "\(replaced.error)")
        #expect(replaced.output.hasSuffix(": moderator\n"), "\(replaced.output)")
        #expect(try roles([]).output.hasSuffix(": moderator\n"))
    }

    @Test("a Users record a client made at the user's name becomes the user's own")
    func squattedUsersRecordIsTakenBack() throws {
        let (victim, _) = try squatted(type: "Users")
        let assigned = try roles(["moderator"])
        #expect(assigned.status == 0, "\(assigned.error)")
        let store = try dataDirectoryStore(directory)
        defer { store.close() }
        let scope = DatabaseScope(container: container, environment: .development, database: .public, owner: DatabaseScope.publicOwner)
        let record = try store.read { reader in
            try reader.zone(scope, name: ZoneID.defaultZoneName).flatMap { try reader.record(zone: $0, name: victim.recordName) }
        }
        #expect(record?.created?.userRecordName == victim.recordName)
        #expect(record?.fields["title"] == .string("mine"))
    }
}
