import Foundation
import Testing
import TandemCore

/// Deleting an account (issue 16; decisions A15): a person who owns a shared zone and takes part
/// in someone else's share is removed through the JSON API, `tandem user remove` and the page;
/// participants lose access, owners' feeds show the participation ended, counts are right, and
/// the email can sign up again as a new account.
@Suite("Account deletion")
struct AccountDeletionTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    /// Bob (signed up with a password, web auth token) shares a note with Carol, who accepted,
    /// and accepted Ada's share; he also has a record in his default zone.
    struct World {
        var bob: Person
        var password: String
        var ada: Person
        var carol: Person
        var bobsNote: SharedNote
        var adasNote: SharedNote
        var adaSyncToken: String
    }

    func world(_ server: TestServer, app: String) throws -> World {
        let email = "\(unique("bob"))@example.com".lowercased()
        let password = "delete me please"
        let record = try server.signUpVerified(email, password: password, apiToken: app, name: "Bob")
        let bob = Person(recordName: record, email: email, token: try server.signIn(email, password: password, apiToken: app))
        let ada = try server.person("ada")
        let carol = try server.person("carol")
        let bobsNote = try server.shareNote(owner: bob, participants: [Invite.email(carol, "READ_WRITE")])
        #expect(try server.accept(bobsNote, as: carol)["serverErrorCode"] == nil)
        let adasNote = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        #expect(try server.accept(adasNote, as: bob)["serverErrorCode"] == nil)
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: "diary", fields: ["title": Body.field("Mine")])]),
                                    as: bob, database: "private")
        #expect(saved.json.record(0)["recordChangeTag"] != nil, "\(saved.text)")
        #expect(try server.sharedZones(as: carol).contains(bobsNote.zone))
        let changes = try server.post("records/changes", ["zoneID": ["zoneName": .string(adasNote.zone)]], as: ada, database: "private")
        let token = try #require(changes.json["syncToken"]?.stringValue, "\(changes.text)")
        return World(bob: bob, password: password, ada: ada, carol: carol, bobsNote: bobsNote, adasNote: adasNote, adaSyncToken: token)
    }

    /// What must hold once Bob is gone.
    func expectGone(_ server: TestServer, _ w: World, app: String) throws {
        #expect(try server.currentUser(w.bob.token) == "AUTHENTICATION_FAILED")
        // Carol lost Bob's zone from her shared database.
        #expect(try !server.sharedZones(as: w.carol).contains(w.bobsNote.zone))
        let lookup = try server.sharedLookup(w.bobsNote, ["note"], as: w.carol)
        #expect(lookup.json.serverErrorCode == "ZONE_NOT_FOUND" || lookup.json.record(0).serverErrorCode != nil, "\(lookup.text)")
        // Ada's change feed carries her share record again, with Bob no longer accepted.
        let changes = try server.post("records/changes", ["zoneID": ["zoneName": .string(w.adasNote.zone)], "syncToken": .string(w.adaSyncToken)],
                                      as: w.ada, database: "private")
        let share = try #require(changes.json.records.first { $0["recordName"] == "share" }, "\(changes.text)")
        let participants = share["participants"]?.arrayValue ?? []
        #expect(!participants.contains { $0["userIdentity"]?["userRecordName"]?.stringValue == w.bob.recordName && $0["acceptanceStatus"] == "ACCEPTED" },
                "\(share)")
        // Nothing of Bob's sign-in is left; the email signs up again as a new account.
        #expect(try server.sqlite("SELECT count(*) FROM sign_in_methods WHERE user_record_name = '\(w.bob.recordName)'") == "0")
        #expect(try server.sqlite("SELECT count(*) FROM zones WHERE owner = '\(w.bob.recordName)' AND database = 'private'") == "0")
        #expect(try server.sqlite("SELECT count(*) FROM container_consents WHERE user_record_name = '\(w.bob.recordName)'") == "0")
        let again = try server.signUpVerified(w.bob.email, password: "a new beginning", apiToken: app)
        #expect(again.hasPrefix("_") && again != w.bob.recordName)
        let token = try server.signIn(w.bob.email, password: "a new beginning", apiToken: app)
        #expect(try server.currentUser(token) == again)
        #expect(try server.sharedZones(as: Person(recordName: again, email: w.bob.email, token: token)).isEmpty)
    }

    @Test func selfServiceDeletionEndsEverythingAndReportsCounts() throws {
        let (server, app) = try Self.lazy.get()
        let w = try world(server, app: app)
        // The password is asked again; a wrong one or none changes nothing.
        let wrong = try server.auth("account/delete", ["password": "not it at all"], bearer: w.bob.token)
        #expect(wrong.status == 403 && wrong.json.serverErrorCode == "ACCESS_DENIED", "\(wrong.text)")
        let missing = try server.auth("account/delete", [:], bearer: w.bob.token)
        #expect(missing.status == 400 && missing.json.serverErrorCode == "BAD_REQUEST", "\(missing.text)")
        #expect(try server.auth("account/delete", ["password": .string(w.password)], bearer: w.bob.token, method: "PUT").status == 405)
        #expect(try server.currentUser(w.bob.token) == w.bob.recordName)

        let deleted = try server.auth("account/delete", ["password": .string(w.password)], bearer: w.bob.token)
        #expect(deleted.status == 200 && deleted.json["deleted"] == true, "\(deleted.text)")
        // Two zones (the shared one and the default zone), note + child + share + diary, one share stopped, one left.
        #expect(deleted.json["zonesDeleted"] == 2 && deleted.json["recordsDeleted"] == 4, "\(deleted.text)")
        #expect(deleted.json["sharesStopped"] == 1 && deleted.json["participationsEnded"] == 1 && deleted.json["sessionsRevoked"] == 1,
                "\(deleted.text)")
        let refused = try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(w.bob.token))
        #expect(refused.json["tandemReason"] == "SESSION_REVOKED", "\(refused.text)")
        try expectGone(server, w, app: app)
    }

    /// A server-to-server key acts as its user: deleting the account revokes it in the same
    /// transaction, `tandem key list` shows it revoked, and a request signed with it is refused
    /// (A43; QA: the key of a deleted user was listed active).
    @Test func aDeletedUsersServerKeysAreRevokedWithTheAccount() throws {
        let (server, app) = try Self.lazy.get()
        let holder = try server.person("keyholder")
        let key = try server.serverKey(user: holder.email)
        let signed = try server.signed("POST", "records/modify", body: ServerKeyTests.create(unique("before")), key: key)
        #expect(signed.status == 200, "\(signed.text)")
        let removed = try runTandem(["user", "remove", holder.email, "--yes", "--data", server.dataDirectory])
        #expect(removed.status == 0 && removed.output.contains("server-keys-revoked=1"), "\(removed)")
        let listed = try runTandem(["key", "list", "--container", TestServer.container, "--data", server.dataDirectory])
        let line = listed.output.split(separator: "\n").first { $0.hasPrefix(key.id) }.map(String.init) ?? ""
        #expect(line.contains("revoked=") && !line.contains("active"), "\(listed.output)")
        let refused = try server.signed("POST", "records/modify", body: ServerKeyTests.create(unique("after")), key: key)
        #expect(refused.status == 401 && refused.json.serverErrorCode == "AUTHENTICATION_FAILED" && refused.text.contains("revoked"),
                "\(refused.text)")

        // Self-service deletion reports the keys it revoked.
        let email = "\(unique("keyed"))@example.com".lowercased()
        try server.signUpVerified(email, password: "keyed password", apiToken: app)
        let token = try server.signIn(email, password: "keyed password", apiToken: app)
        let own = try server.serverKey(user: email)
        let deleted = try server.auth("account/delete", ["password": "keyed password"], bearer: token)
        #expect(deleted.status == 200 && deleted.json["serverKeysRevoked"] == 1, "\(deleted.text)")
        #expect(try server.sqlite("SELECT revoked_at IS NOT NULL FROM server_keys WHERE key_id = '\(own.id)'") == "1")
    }

    @Test func theOperatorRemovesAUserWithTheCLI() throws {
        let (server, app) = try Self.lazy.get()
        let w = try world(server, app: app)
        let refused = try runTandem(["user", "remove", w.bob.email, "--data", server.dataDirectory])
        #expect(refused.status == 64 && refused.error.contains("--yes"), "\(refused)")
        #expect(try server.currentUser(w.bob.token) == w.bob.recordName)
        let removed = try runTandem(["user", "remove", w.bob.email, "--yes", "--data", server.dataDirectory])
        #expect(removed.status == 0, "\(removed)")
        #expect(removed.output.contains("zones=2 records=4 shares-stopped=1 participations-ended=1 sessions-revoked=1 server-keys-revoked=0"),
                "\(removed.output)")
        let twice = try runTandem(["user", "remove", w.bob.email, "--yes", "--data", server.dataDirectory])
        #expect(twice.status == 1 && twice.error.contains("no user"), "\(twice)")
        // Another process revoked the token: the server's cache may keep it up to 30 s (A6).
        let deadline = Date().addingTimeInterval(40)
        while try server.currentUser(w.bob.token) != "AUTHENTICATION_FAILED" && Date() < deadline { Thread.sleep(forTimeInterval: 1) }
        try expectGone(server, w, app: app)
    }

    @Test func thePageDeletesAfterCSRFAndThePassword() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let app = try server.apiToken(origins: ["http://127.0.0.1:9"])
        let w = try world(server, app: app)
        let url = "\(server.baseURL)/signin/account/delete?ckAPIToken=\(app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
        let form = try server.request("GET", url, token: .some(nil))
        #expect(form.status == 200 && form.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(!form.text.contains("<script>") && form.text.contains("name=\"confirm\""))
        let cookie = try #require(form.headers["set-cookie"]?.split(separator: ";").first.map(String.init), "\(form.headers)")
        let csrf = try #require(form.text.range(of: #"name="csrf" value="([0-9a-f]+)""#, options: .regularExpression)
            .map { String(form.text[$0]).split(separator: "\"")[3] }.map(String.init))
        func submit(_ fields: [String: String], cookie: String?) throws -> TestServer.Response {
            var all = fields
            all["ckAPIToken"] = app
            let body = all.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }.joined(separator: "&")
            var headers = ["Content-Type": "application/x-www-form-urlencoded"]
            if let cookie { headers["Cookie"] = cookie }
            return try server.request("POST", "\(server.baseURL)/signin/account/delete", body: Data(body.utf8), token: .some(nil), headers: headers)
        }
        let good = ["email": w.bob.email, "password": w.password, "confirm": "yes", "csrf": csrf]
        #expect(try submit(good, cookie: nil).status == 403)
        #expect(try submit(good.merging(["csrf": String(repeating: "0", count: 64)]) { $1 }, cookie: cookie).status == 403)
        #expect(try submit(good.merging(["password": "wrong password"]) { $1 }, cookie: cookie).status == 401)
        #expect(try submit(good.filter { $0.key != "confirm" }, cookie: cookie).status == 400)
        #expect(try server.currentUser(w.bob.token) == w.bob.recordName)
        let done = try submit(good, cookie: cookie)
        #expect(done.status == 200 && done.text.contains("Your account was deleted"), "\(done.text)")
        #expect(done.text.contains("<span id=\"zones\">2</span>") && done.text.contains("<span id=\"participations\">1</span>"), "\(done.text)")
        try expectGone(server, w, app: app)
    }
}
