import Foundation
import Testing
import TandemCore
import TandemPostgres
import TandemSQLite
import TandemStore
import TandemStorePostgres
import TandemStoreSQLite
import TandemTestSupport

/// `tandem migrate` (issue 19 item 4; decisions P40–P43): a data directory filled by a real
/// `tandem serve` goes to PostgreSQL and back, and the server on the result still honours the
/// change tokens and API tokens issued before the move.
@Suite(.serialized, .sqliteOnly("names both stores itself: a SQLite directory and a database of its own cluster")) struct MigrateCommandTests {
    /// Every field type, lists and an asset, as a client saves them.
    static func fields(asset: JSONValue) -> JSONObject {
        [
            "title": Body.field("Moved with everything in it", "STRING"),
            // PostgreSQL's field index holds U+0000 and U+0001 escaped (P50): the copy escapes and unescapes.
            "control": Body.field("nul \u{0} and \u{1} inside", "STRING"),
            "count": Body.field(.int(Int64.min), "INT64"),
            "ratio": Body.field(-0.0, "DOUBLE"),
            "when": Body.field(.int(1_764_000_000_123), "TIMESTAMP"),
            "raw": Body.field(.string(Data((0...255).map { UInt8($0) }).base64EncodedString()), "BYTES"),
            "place": Body.field(["latitude": 52.5, "longitude": 13.4, "horizontalAccuracy": 5.0], "LOCATION"),
            "target": Body.field(["recordName": "target", "action": "NONE"], "REFERENCE"),
            "photo": Body.field(asset, "ASSET"),
            "tags": Body.field(["ünï", "b", "ünï"], "STRING_LIST"),
            "numbers": Body.field([.int(1), .int(-2), .int(Int64.max)], "INT64_LIST"),
            "doubles": Body.field([0.5, -1.25], "DOUBLE_LIST"),
            "blobs": Body.field(["AAE=", ""], "BYTES_LIST"),
            "empty": Body.field([], "STRING_LIST"),
        ]
    }

    @Test func aStoreMovesToPostgresAndBackAndItsTokensStillWork() throws {
        let server = try TestServer()
        let ada = Person(recordName: server.userRecordName, email: "ada@example.com", token: server.token)
        let bob = try server.person("bob")
        let apiToken = try TestServer.admin(["token", "create", "--api", "--container", TestServer.container, "--data", server.dataDirectory])

        // Records of every field type with an asset, in a custom zone.
        let zone = try server.makeZone("moved")
        let photo = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let receipt = try upload(server, photo)
        try server.create("target", fields: [:], zone: zone)
        try server.create("full", fields: Self.fields(asset: receipt), zone: zone)
        // A share with a participant who accepted, a subscription, a conversation with a link.
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        #expect(try server.accept(note, as: bob).serverErrorCode == nil)
        _ = try server.subscribe(["subscriptionID": "everything", "subscriptionType": "database"], as: ada)
        let conversation = try server.conversation(ada, with: [bob], title: "Moving day")
        try server.say("the plan: https://example.com/move", in: conversation, as: ada, links: [["url": "https://example.com/move"]])

        // Change tokens a client holds across the move.
        var mirror = ZoneMirror()
        #expect(try mirror.catchUp(server, zoneID: ["zoneName": .string(zone)], as: ada) == nil)
        #expect(mirror.records.keys.sorted() == ["full", "target"])
        let databaseToken = try #require(try server.databaseFeed(as: ada, database: "private", token: nil).token)
        server.stop()

        // SQLite → PostgreSQL.
        let url = try PostgresCluster.shared().createDatabase()
        let files = NSTemporaryDirectory() + "tandem-migrate-files-" + UUID().uuidString
        ExitCleanup.removeAtExit(files)
        let there = try runTandem(["migrate", "--from", server.dataDirectory, "--to", url, "--to-data", files])
        #expect(there.status == 0, "\(there.error)")
        #expect(there.error.contains("migrate: records done: "), "\(there.error)")
        #expect(there.error.contains("rows/s; counts, checksums, identity positions and files verified"), "\(there.error)")
        #expect(FileManager.default.contents(atPath: files + "/secret.key") == FileManager.default.contents(atPath: server.dataDirectory + "/secret.key"))
        // The planner's statistics are there at once (P46's 20 s first query without them).
        #expect(there.error.contains("migrate: ANALYZE done"), "\(there.error)")
        let analyzed = try PostgresConnection(url: url)
        #expect(try analyzed.queryOne("SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND tablename = 'records'") { try $0.int64(0) } ?? 0 > 0)
        analyzed.close()
        // The files' directory is marked as a PostgreSQL store's (P57); the marker is not copied back.
        #expect(FileManager.default.fileExists(atPath: files + "/postgres-store"))

        // Indexes and foreign keys dropped for the load are all back (P43).
        let fresh = try PostgresConnection(url: try PostgresCluster.shared().createDatabase())
        let moved = try PostgresConnection(url: url)
        try PostgresMigrator.migrate(fresh)
        let shape = "SELECT (SELECT string_agg(indexdef, ';' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public') || (SELECT string_agg(conname || pg_get_constraintdef(oid), ';' ORDER BY conname) FROM pg_constraint WHERE connamespace = 'public'::regnamespace)"
        #expect(try moved.queryOne(shape) { try $0.string(0) } == (try fresh.queryOne(shape) { try $0.string(0) }))
        fresh.close()
        moved.close()

        // The PostgreSQL store, opened as the server would, holds the same values.
        let sqlite: any Store = try SQLiteStore(directory: server.dataDirectory, options: .init(readerCount: 1))
        let postgres: any Store = try PostgresStore(url: url, options: .init(directory: files, poolSize: 2))
        let scope = DatabaseScope(container: TestServer.container, environment: .development, database: .private, owner: ada.recordName)
        func snapshot(_ store: any Store) throws -> (record: Record?, participants: Int, subscriptions: [String], events: Int) {
            try store.read { tx in
                let moved = try #require(try tx.zone(scope, name: zone))
                let shared = try #require(try tx.zone(scope, name: note.zone))
                let share = try #require(try tx.shares(zone: shared).first)
                return (try tx.record(zone: moved, name: "full"), try tx.participants(share: share).count,
                        try tx.subscriptions(owner: ada.recordName, limit: 10).map(\.subscription.subscriptionID),
                        try tx.conversationEvents(conversation: conversation, viewer: ada.recordName, after: 0, limit: 100).count)
            }
        }
        let before = try snapshot(sqlite)
        let after = try snapshot(postgres)
        #expect(before.record != nil)
        #expect(after.record == before.record)
        #expect(after.participants == before.participants && after.participants >= 1)
        #expect(after.subscriptions == ["everything"])
        #expect(after.events == before.events && after.events > 0)
        // Closed before the copy back, which refuses a source a server is connected to.
        sqlite.close()
        postgres.close()

        // PostgreSQL → a fresh data directory, served.
        let back = NSTemporaryDirectory() + "tandem-migrate-back-" + UUID().uuidString
        let home = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", back])
        #expect(home.status == 0, "\(home.error)")
        #expect(!FileManager.default.fileExists(atPath: back + "/postgres-store"))
        let indexes = "SELECT group_concat(name || ':' || sql, ';') FROM (SELECT name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') ORDER BY name)"
        let original = try SQLiteConnection(path: server.dataDirectory + "/tandem.sqlite", readOnly: true)
        let returned = try SQLiteConnection(path: back + "/tandem.sqlite", readOnly: true)
        #expect(try returned.queryOne(indexes) { $0.text(0) } == (try original.queryOne(indexes) { $0.text(0) }))
        original.close(); returned.close()
        let served = try TestServer(dataDirectory: back)

        // The old tokens authenticate.
        let current = try served.request("GET", served.databaseURL("users/current"), token: .some(ada.token))
        #expect(current.status == 200 && current.json["userRecordName"]?.stringValue == ada.recordName, "\(current.text)")
        let encoded = bob.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let viaAPIToken = try served.request("GET", served.databaseURL("users/current", database: "public") + "?ckAPIToken=\(apiToken)&ckWebAuthToken=\(encoded)",
                                             token: .some(nil))
        #expect(viaAPIToken.status == 200 && viaAPIToken.json["userRecordName"]?.stringValue == bob.recordName, "\(viaAPIToken.text)")

        // Old change tokens return only what changed after the move.
        let later = try served.post("records/modify", Body.modify([Body.operation("create", name: "after-move", fields: ["title": Body.field("new")])], zone: zone),
                                    token: .some(ada.token))
        #expect(later.status == 200, "\(later.text)")
        var sinceMove = ZoneMirror(token: mirror.token)
        #expect(try sinceMove.catchUp(served, zoneID: ["zoneName": .string(zone)], as: ada) == nil)
        #expect(sinceMove.records.keys.sorted() == ["after-move"])
        let feed = try served.databaseFeed(as: ada, database: "private", token: databaseToken)
        #expect(feed.error == nil)
        #expect(feed.zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue } == [zone])

        // The asset comes back from the moved files.
        let lookup = try served.post("records/lookup", Body.lookup(["full"], zone: zone), token: .some(ada.token))
        let download = try #require(lookup.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue)
        #expect(try served.request("GET", download, token: .some(ada.token)).body == photo)
    }

    /// Review 47: a copy taken while the source's server kept writing was verified and reported
    /// done without the writes after its snapshot. A SQLite store's server holds its directory's
    /// lock, a PostgreSQL store's servers show in `pg_stat_activity`; either refuses the copy.
    @Test func aStoreAServerIsUsingIsNotCopied() throws {
        let server = try TestServer()
        let target = NSTemporaryDirectory() + "tandem-migrate-busy-" + UUID().uuidString
        ExitCleanup.removeAtExit(target)
        let refused = try runTandem(["migrate", "--from", server.dataDirectory, "--to", target])
        #expect(refused.status == 1, "\(refused.error)")
        #expect(refused.error.contains("a tandem server (or another migrate) is using \(server.dataDirectory)"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: target))
        // Nor into a directory a server is using, even with --force.
        let source = try filledDirectory()
        let into = try runTandem(["migrate", "--from", source, "--to", server.dataDirectory, "--force"])
        #expect(into.status == 1 && into.error.contains("is using \(server.dataDirectory)"), "\(into.error)")
        server.stop()

        let url = try PostgresCluster.shared().createDatabase()
        let files = try ExitCleanup.temporaryDirectory("tandem-migrate-busy-files")
        let store: any Store = try PostgresStore(url: url, options: .init(directory: files, poolSize: 1))
        _ = try store.read { try $0.containers() }
        let busy = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", target])
        #expect(busy.status == 1, "\(busy.error)")
        #expect(busy.error.contains("1 other connection is open on the source"), "\(busy.error)")
        #expect(!FileManager.default.fileExists(atPath: target + "/tandem.sqlite"))
        store.close()
        let idle = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", target])
        #expect(idle.status == 0, "\(idle.error)")
    }

    /// After a move both copies start a new generation (P78): a change token one of them issues
    /// afterwards is `CHANGE_TOKEN_EXPIRED` on the other (review 47: going back to the old copy
    /// read a newer copy's token as a position of its own and skipped records for good), tokens
    /// from before the move stay valid on both, and a token ahead of the zone (a restored file
    /// backup, same generation) is expired too.
    @Test func aTokenIssuedByOneCopyAfterTheMoveIsExpiredOnTheOther() throws {
        let server = try TestServer()
        let ada = Person(recordName: server.userRecordName, email: "ada@example.com", token: server.token)
        let zone = try server.makeZone("parted")
        let zoneID: JSONValue = ["zoneName": .string(zone)]
        try server.create("before", fields: [:], zone: zone)
        var beforeMove = ZoneMirror()
        #expect(try beforeMove.catchUp(server, zoneID: zoneID, as: ada) == nil)
        let databaseBefore = try #require(try server.databaseFeed(as: ada, database: "private", token: nil).token)
        server.stop()

        let moved = NSTemporaryDirectory() + "tandem-migrate-parted-" + UUID().uuidString
        ExitCleanup.removeAtExit(moved)
        let copy = try runTandem(["migrate", "--from", server.dataDirectory, "--to", moved])
        #expect(copy.status == 0, "\(copy.error)")

        // The copy serves for a while: its tokens are its own.
        let there = try TestServer(dataDirectory: moved)
        try create("on-the-copy", on: there, as: ada, zone: zone)
        var onCopy = beforeMove
        #expect(try onCopy.catchUp(there, zoneID: zoneID, as: ada) == nil)
        #expect(onCopy.records.keys.sorted() == ["before", "on-the-copy"])
        let databaseOnCopy = try #require(try there.databaseFeed(as: ada, database: "private", token: databaseBefore).token)
        there.stop()

        // Back on the old copy: the newer copy's tokens are expired, its own from before still work.
        let old = try TestServer(dataDirectory: server.dataDirectory)
        try create("rollback1", on: old, as: ada, zone: zone)
        try create("rollback2", on: old, as: ada, zone: zone)
        var stale = ZoneMirror(token: onCopy.token)
        #expect(try stale.catchUp(old, zoneID: zoneID, as: ada) == "CHANGE_TOKEN_EXPIRED")
        #expect(try old.databaseFeed(as: ada, database: "private", token: databaseOnCopy).error == "CHANGE_TOKEN_EXPIRED")
        var resumed = beforeMove
        #expect(try resumed.catchUp(old, zoneID: zoneID, as: ada) == nil)
        #expect(resumed.records.keys.sorted() == ["before", "rollback1", "rollback2"])
        #expect(try old.databaseFeed(as: ada, database: "private", token: databaseBefore).error == nil)
        old.stop()

        // And the other way round.
        let again = try TestServer(dataDirectory: moved)
        var fromOld = ZoneMirror(token: resumed.token)
        #expect(try fromOld.catchUp(again, zoneID: zoneID, as: ada) == "CHANGE_TOKEN_EXPIRED")
        var fresh = ZoneMirror()
        #expect(try fresh.catchUp(again, zoneID: zoneID, as: ada) == nil)
        #expect(fresh.records.keys.sorted() == ["before", "on-the-copy"])
        again.stop()

        // A file backup of the copy, restored after more writes: same generation, but the newer
        // token is ahead of the restored zone and of its feed.
        let backup = NSTemporaryDirectory() + "tandem-migrate-backup-" + UUID().uuidString
        ExitCleanup.removeAtExit(backup)
        try FileManager.default.copyItem(atPath: moved, toPath: backup)
        let later = try TestServer(dataDirectory: moved)
        try create("after-backup", on: later, as: ada, zone: zone)
        var ahead = fresh
        #expect(try ahead.catchUp(later, zoneID: zoneID, as: ada) == nil)
        let databaseAhead = try #require(try later.databaseFeed(as: ada, database: "private", token: databaseOnCopy).token)
        later.stop()
        let restored = try TestServer(dataDirectory: backup)
        var fromAhead = ZoneMirror(token: ahead.token)
        #expect(try fromAhead.catchUp(restored, zoneID: zoneID, as: ada) == "CHANGE_TOKEN_EXPIRED")
        #expect(try restored.databaseFeed(as: ada, database: "private", token: databaseAhead).error == "CHANGE_TOKEN_EXPIRED")
        var fromBackup = fresh
        #expect(try fromBackup.catchUp(restored, zoneID: zoneID, as: ada) == nil)
        restored.stop()

        // Review 49: once a restored backup has caught up, "ahead" no longer shows. Putting a
        // backup back is followed by `tandem store new-generation`, after which every earlier
        // token is expired, however far the store has come since.
        let renewed = try runTandem(["store", "new-generation", "--data", backup])
        #expect(renewed.status == 0, "\(renewed.error)")
        let back = try TestServer(dataDirectory: backup)
        for name in ["caught-up-1", "caught-up-2", "caught-up-3"] { try create(name, on: back, as: ada, zone: zone) }
        var caughtUp = ZoneMirror(token: ahead.token)
        #expect(try caughtUp.catchUp(back, zoneID: zoneID, as: ada) == "CHANGE_TOKEN_EXPIRED")
        #expect(try back.databaseFeed(as: ada, database: "private", token: databaseAhead).error == "CHANGE_TOKEN_EXPIRED")
        var anew = ZoneMirror()
        #expect(try anew.catchUp(back, zoneID: zoneID, as: ada) == nil)
        #expect(anew.records.keys.sorted() == ["before", "caught-up-1", "caught-up-2", "caught-up-3", "on-the-copy"])
        var renewedToken = ZoneMirror(token: anew.token)
        #expect(try renewedToken.catchUp(back, zoneID: zoneID, as: ada) == nil)
        back.stop()
    }

    /// `tandem serve --store DIR1 --data DIR2` keeps `secret.key` in DIR2: `--from-data DIR2`
    /// takes it along, and change tokens from before the move still work after it (P58).
    @Test func aSQLiteStoreWhoseFilesLiveApartMovesWithItsSecret() throws {
        let database = try ExitCleanup.temporaryDirectory("tandem-migrate-db")
        let data = try ExitCleanup.temporaryDirectory("tandem-migrate-data")
        let place = ["--data", data, "--store", database]
        try TestServer.admin(["container", "create", TestServer.container] + place)
        let recordName = try TestServer.admin(["user", "add", "--email", "ada@example.com"] + place)
        let ada = Person(recordName: recordName, email: "ada@example.com",
                         token: try TestServer.admin(["token", "create", "--user", "ada@example.com"] + place))
        let server = try TestServer(extraArguments: ["--store", database], dataDirectory: data)
        let made = try server.post("records/modify", Body.modify([Body.operation("create", name: "before", fields: ["title": Body.field("t")])]),
                                   token: .some(ada.token))
        #expect(made.status == 200, "\(made.text)")
        var mirror = ZoneMirror()
        #expect(try mirror.catchUp(server, zoneID: ["zoneName": "_defaultZone"], as: ada) == nil)
        server.stop()
        #expect(FileManager.default.fileExists(atPath: data + "/secret.key") && !FileManager.default.fileExists(atPath: database + "/secret.key"))

        // Without --from-data the copy says what it cannot carry.
        let unkeyed = NSTemporaryDirectory() + "tandem-migrate-unkeyed-" + UUID().uuidString
        ExitCleanup.removeAtExit(unkeyed)
        let warned = try runTandem(["migrate", "--from", database, "--to", unkeyed])
        #expect(warned.status == 0 && warned.error.contains("holds no secret.key"), "\(warned.error)")

        let url = try PostgresCluster.shared().createDatabase()
        let files = NSTemporaryDirectory() + "tandem-migrate-apart-" + UUID().uuidString
        ExitCleanup.removeAtExit(files)
        let moved = try runTandem(["migrate", "--from", database, "--from-data", data, "--to", url, "--to-data", files])
        #expect(moved.status == 0, "\(moved.error)")
        #expect(FileManager.default.contents(atPath: files + "/secret.key") == FileManager.default.contents(atPath: data + "/secret.key"))
        let served = try TestServer(extraArguments: ["--store", url], dataDirectory: files)
        _ = try served.post("records/modify", Body.modify([Body.operation("create", name: "after", fields: ["title": Body.field("t")])]),
                            token: .some(ada.token))
        var sinceMove = ZoneMirror(token: mirror.token)
        #expect(try sinceMove.catchUp(served, zoneID: ["zoneName": "_defaultZone"], as: ada) == nil)
        #expect(sinceMove.records.keys.sorted() == ["after"])
    }

    /// `localhost` and `127.0.0.1` reach the same database: refused, not a copy that waits on
    /// its own locks for ever (P59).
    @Test func oneDatabaseUnderTwoURLsIsRefused() throws {
        let source = try filledDirectory()
        let url = try PostgresCluster.shared().createDatabase()
        let files = NSTemporaryDirectory() + "tandem-migrate-self-" + UUID().uuidString
        ExitCleanup.removeAtExit(files)
        #expect(try runTandem(["migrate", "--from", source, "--to", url, "--to-data", files]).status == 0)
        let other = url.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:")
        let result = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", other, "--to-data", files + "-2", "--force"], timeout: 60)
        #expect(result.status == 1, "\(result.error)")
        #expect(result.error.contains("the source and the target are the same PostgreSQL database"), "\(result.error)")
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        #expect(try connection.queryOne("SELECT count(*) FROM records") { try $0.int64(0) } ?? 0 > 0, "the source is untouched")
    }

    @Test func aTargetHoldingDataIsRefusedAndLeftAsItWas() throws {
        let source = try filledDirectory()
        let url = try PostgresCluster.shared().createDatabase()
        let files = NSTemporaryDirectory() + "tandem-migrate-refuse-" + UUID().uuidString
        ExitCleanup.removeAtExit(files)
        #expect(try runTandem(["migrate", "--from", source, "--to", url, "--to-data", files]).status == 0)

        // A second copy into the same database (with an empty file directory) is refused.
        let otherFiles = files + "-other"
        ExitCleanup.removeAtExit(otherFiles)
        let again = try runTandem(["migrate", "--from", source, "--to", url, "--to-data", otherFiles])
        #expect(again.status == 1)
        #expect(again.error.contains("refusing to write into the PostgreSQL database: it holds"), "\(again.error)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: otherFiles)) == nil)

        // A data directory with files is refused before anything is made in it.
        let occupied = NSTemporaryDirectory() + "tandem-migrate-occupied-" + UUID().uuidString
        ExitCleanup.removeAtExit(occupied)
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: occupied + "/notes.txt"))
        let refused = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", occupied])
        #expect(refused.status == 1)
        #expect(refused.error.contains("refusing to write into \(occupied)"), "\(refused.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: occupied) == ["notes.txt"])

        // --force replaces: the copy goes through and verifies.
        let forced = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", occupied, "--force"])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(FileManager.default.fileExists(atPath: occupied + "/tandem.sqlite"))
        let forcedAgain = try runTandem(["migrate", "--from", source, "--to", url, "--to-data", files, "--force"])
        #expect(forcedAgain.status == 0, "\(forcedAgain.error)")
        #expect(forcedAgain.error.contains("--force: deleting the"), "\(forcedAgain.error)")

        // Review 49: a --force copy that fails puts the target's files back as they were; before,
        // its rows stayed but secret.key was the source's, and its clients' tokens failed.
        let keyBefore = try #require(FileManager.default.contents(atPath: files + "/secret.key"))
        let broken = try filledDirectory()
        let connection = try SQLiteConnection(path: broken + "/tandem.sqlite")
        try connection.run("INSERT INTO containers (id, created_at) VALUES (char(97, 0, 98), 0)")  // PostgreSQL text holds no NUL
        connection.close()
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: broken + "/secret.key"))
        let failed = try runTandem(["migrate", "--from", broken, "--to", url, "--to-data", files, "--force"])
        #expect(failed.status == 1, "\(failed.error)")
        #expect(FileManager.default.contents(atPath: files + "/secret.key") == keyBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: files).filter { $0.contains("tandem-migrate") } == [])

        // A SQLite target holding a store says so; a PostgreSQL store's files never go beside one.
        let used = try runTandem(["migrate", "--from", url, "--from-data", files, "--to", occupied])
        #expect(used.error.contains("and a SQLite store (tandem.sqlite); --force replaces"), "\(used.error)")
        let beside = try runTandem(["migrate", "--from", source, "--to", try PostgresCluster.shared().createDatabase(), "--to-data", occupied, "--force"])
        #expect(beside.status == 1 && beside.error.contains("refusing to write into \(occupied): it holds a SQLite store"), "\(beside.error)")
        #expect(!FileManager.default.fileExists(atPath: occupied + "/postgres-store"))
    }

    @Test func aTargetAtAnotherSchemaVersionIsRefusedEvenWithForce() throws {
        let source = try filledDirectory()
        let url = try PostgresCluster.shared().createDatabase()
        let connection = try PostgresConnection(url: url)
        try PostgresMigrator.migrate(connection, Array(PostgresMigrations.all.dropLast()))
        // Closed: an open connection of ours reads as a server's (the copy refuses those first).
        connection.close()
        let files = NSTemporaryDirectory() + "tandem-migrate-version-" + UUID().uuidString
        ExitCleanup.removeAtExit(files)
        let refused = try runTandem(["migrate", "--from", source, "--to", url, "--to-data", files, "--force"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("it is at schema version \(PostgresMigrations.all.dropLast().last!.version)"), "\(refused.error)")
        let after = try PostgresConnection(url: url)
        defer { after.close() }
        #expect(try after.queryOne("SELECT count(*) FROM containers") { try $0.int64(0) } == 0)
    }

    @Test(arguments: [
        (["migrate", "--from", "/nonexistent/tandem-data", "--to", "TARGET"], Int32(1), "no Tandem data in /nonexistent/tandem-data"),
        (["migrate", "--from", "DIR", "--to", "postgres://nobody@127.0.0.1:1/none", "--to-data", "TARGET"], 1, "cannot connect to the PostgreSQL database"),
        (["migrate", "--from", "DIR", "--to", "postgres://%zz", "--to-data", "TARGET"], 1, "cannot connect to the PostgreSQL database"),
        (["migrate", "--from", "DIR", "--to", "postgres://127.0.0.1/x"], 64, "needs --to-data"),
        (["migrate", "--from", "DIR"], 64, "migrate needs --from"),
        (["migrate", "--from", "DIR", "--to", "DIR"], 1, "the same place"),
        // A mistyped option is refused before anything is copied (it ran the whole copy, stop 42's review).
        (["migrate", "--forse", "--from", "DIR", "--to", "TARGET"], 64, "--forse"),
        (["migrate", "--from", "DIR", "--to", "TARGET", "--bogus", "x"], 64, "migrate takes no --bogus"),
    ])
    func badArgumentsAreRefusedWithTheReason(arguments: [String], status: Int32, message: String) throws {
        let source = try filledDirectory()
        // A target of this case alone, which no refused command may create.
        let target = NSTemporaryDirectory() + "tandem-migrate-unused-" + UUID().uuidString
        ExitCleanup.removeAtExit(target)
        let result = try runTandem(arguments.map { $0 == "DIR" ? source : $0 == "TARGET" ? target : $0 })
        #expect(result.status == status)
        #expect(result.error.contains(message), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    /// Creates a record on a server of a directory made before (whose TestServer has no token of its own).
    private func create(_ name: String, on server: TestServer, as person: Person, zone: String) throws {
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: [:])], zone: zone),
                                       token: .some(person.token))
        #expect(response.status == 200 && response.json.record(0)["serverErrorCode"] == nil, "\(response.text)")
    }

    /// A data directory with a container, a user and a record, made by the CLI and a short serve.
    private func filledDirectory() throws -> String {
        let server = try TestServer()
        try server.create("one", fields: ["title": Body.field("hello")])
        server.stop()
        let copy = NSTemporaryDirectory() + "tandem-migrate-source-" + UUID().uuidString
        ExitCleanup.removeAtExit(copy)
        try FileManager.default.copyItem(atPath: server.dataDirectory, toPath: copy)
        return copy
    }

    private func upload(_ server: TestServer, _ bytes: Data) throws -> JSONValue {
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Note", "fieldName": "photo"]]])
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        let uploaded = try server.request("POST", url, body: bytes, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        return try #require(uploaded.json["singleFile"])
    }
}
