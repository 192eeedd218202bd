import Foundation
import Testing
import TandemPostgres
import TandemStore
import TandemTestSupport

/// A newcomer's first hour on PostgreSQL (decisions P57, P60): the first-run hint's commands
/// reach the server's database, a command that forgot `--store` is refused instead of making a
/// SQLite store nobody reads, and the smaller things a review found (the start line, letter case
/// of the scheme, a database owned by another role, a listing command's directory).
@Suite(.sqliteOnly("names a database of the shared cluster itself and runs commands without --store on purpose"))
struct PostgresFirstHourTests {
    /// A fresh database's URL with a password in it (the test cluster trusts loopback, so the
    /// password is never asked for: it is there to be hidden), and the URL without it.
    static func database() throws -> (url: String, shown: String) {
        let shown = try PostgresCluster.shared().createDatabase()
        return (shown.replacingOccurrences(of: "://postgres@", with: "://postgres:hunter2@"), shown)
    }

    @Test func theFirstRunHintNamesTheStoreAndACommandWithoutItIsRefused() throws {
        let (url, shown) = try Self.database()
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-first-hour")
        let server = try TestServer(extraArguments: ["--store", url], dataDirectory: data)
        defer { server.stop() }
        #expect(try eventually(seconds: 20) { server.standardError?.value.contains("tandem token create") == true }, "\(server.standardError?.value ?? "")")
        let log = server.standardError?.value ?? ""
        #expect(!log.contains("hunter2"), "\(log)")
        // The start line names the store, without the password.
        #expect(log.contains("store: postgres, pool=16, isolation=SERIALIZABLE, \(shown))"), "\(log)")
        let create = try #require(log.split(separator: "\n").first { $0.contains("tandem container create") }, "\(log)")
        #expect(create.hasSuffix("--data \(data) --store \(shown)"), "\(create)")
        #expect(log.contains("~/.pgpass or PGPASSWORD"), "\(log)")

        // Run as printed, the command reaches the server's database.
        let printed = create.split(separator: " ").map(String.init).drop { $0 != "tandem" }.dropFirst()
        let made = try runTandem(Array(printed))
        #expect(made.status == 0, "\(made.error)")
        #expect(!FileManager.default.fileExists(atPath: data + "/tandem.sqlite"))
        let listed = try runTandem(["container", "list", "--data", data, "--store", url])
        #expect(listed.output == "iCloud.com.example.notes\n", "\(listed.error)")

        // Without --store: one line, exit 1, the URL to add, and no SQLite store made.
        for command in [["container", "create", "iCloud.com.example.hidden"], ["user", "list"], ["token", "create", "--user", "x@example.com"]] {
            let refused = try runTandem(command + ["--data", data])
            #expect(refused.status == 1, "\(command): \(refused.error)")
            #expect(refused.error.split(separator: "\n").count == 1, "\(refused.error)")
            #expect(refused.error.hasPrefix("error: \(data) is the data directory of a PostgreSQL store"), "\(refused.error)")
            #expect(refused.error.contains("add --store \(shown) "), "\(refused.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: data + "/tandem.sqlite"))
    }

    /// Review 47: one `serve --store postgres://… --data DIR` on a SQLite store's directory served
    /// an empty database and marked DIR as PostgreSQL's, after which DIR's SQLite store could not
    /// be served or administered. Now the PostgreSQL store is refused there and DIR stays SQLite's;
    /// `migrate --from` a PostgreSQL server's data directory names the URL to give instead.
    @Test func aSQLiteStoresDirectoryIsNotTakenOverByAPostgresStore() throws {
        let (url, shown) = try Self.database()
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-sqlite-dir")
        #expect(try runTandem(["container", "create", "iCloud.com.example.kept", "--data", data]).status == 0)
        for command in [["serve", "--port", "0", "--stop-on-stdin-eof"], ["container", "list"]] {
            let refused = try runTandem(command + ["--data", data, "--store", url], timeout: 30)
            #expect(refused.status == 1, "\(command): \(refused.error)")
            #expect(refused.error.hasPrefix("error: \(data) holds a SQLite store"), "\(refused.error)")
            #expect(refused.error.contains("tandem migrate --from \(data) --to postgres://"), "\(refused.error)")
            #expect(!refused.error.contains("hunter2"), "\(refused.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: data + "/postgres-store"))
        let listed = try runTandem(["container", "list", "--data", data])
        #expect(listed.output == "iCloud.com.example.kept\n", "\(listed.error)")

        let files = try ExitCleanup.temporaryDirectory("tandem-pg-files")
        try PostgresMarker.write(shown, in: files)
        let target = NSTemporaryDirectory() + "tandem-pg-unused-" + UUID().uuidString
        let migrate = try runTandem(["migrate", "--from", files, "--to", target])
        #expect(migrate.status == 64, "\(migrate.error)")
        #expect(migrate.error.hasPrefix("\(files) is the data directory of a PostgreSQL store: give --from \(shown) --from-data \(files)"),
                "\(migrate.error)")
        #expect(!FileManager.default.fileExists(atPath: target))
        // Nor is a PostgreSQL server's data directory a SQLite target, even with --force (review 50).
        try Data("the server's key".utf8).write(to: URL(fileURLWithPath: files + "/secret.key"))
        let over = try runTandem(["migrate", "--from", data, "--to", files, "--force"])
        #expect(over.status == 1 && over.error.contains("refusing to write into \(files): it is the data directory of a PostgreSQL store"),
                "\(over.error)")
        #expect(FileManager.default.contents(atPath: files + "/secret.key") == Data("the server's key".utf8))
        #expect(PostgresMarker.url(in: files) == shown)
        #expect(!FileManager.default.fileExists(atPath: files + "/tandem.sqlite"))
        // Nor the files of another PostgreSQL store beside its own (review 51).
        let other = try PostgresCluster.shared().createDatabase()
        let beside = try runTandem(["migrate", "--from", data, "--to", other, "--to-data", files, "--force"])
        #expect(beside.status == 1 && beside.error.contains("refusing to write into \(files): it is the data directory of another PostgreSQL store (\(shown))"),
                "\(beside.error)")
        #expect(FileManager.default.contents(atPath: files + "/secret.key") == Data("the server's key".utf8))
        #expect(PostgresMarker.url(in: files) == shown)
    }

    @Test(arguments: ["POSTGRES://", "PostgreSQL://"])
    func aSchemeInCapitalsIsAPostgresURL(_ scheme: String) throws {
        let (_, shown) = try Self.database()
        let url = scheme + shown.dropFirst("postgres://".count)
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-scheme")
        let made = try runTandem(["container", "create", "iCloud.com.example.caps", "--data", data, "--store", url])
        #expect(made.status == 0, "\(made.error)")
        let listed = try runTandem(["container", "list", "--data", data, "--store", shown])
        #expect(listed.output == "iCloud.com.example.caps\n", "\(listed.error)")
    }

    @Test func aListingCommandLeavesNoDataDirectoryBehind() throws {
        let (url, _) = try Self.database()
        let data = NSTemporaryDirectory() + "tandem-pg-listing-" + UUID().uuidString
        ExitCleanup.removeAtExit(data)
        let listed = try runTandem(["container", "list", "--data", data, "--store", url])
        #expect(listed.status == 0 && listed.output.isEmpty, "\(listed.error)")
        #expect(!FileManager.default.fileExists(atPath: data), "a read-only command made \(data)")
    }

    @Test func aDatabaseOwnedByAnotherRoleSaysWhoMustOwnIt() throws {
        let (_, shown) = try Self.database()
        let role = "guest_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try PostgresConnection(url: shown)
        try admin.execute("CREATE ROLE \(role) LOGIN")
        admin.close()
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-owner")
        let result = try runTandem(["container", "list", "--data", data, "--store", shown.replacingOccurrences(of: "://postgres@", with: "://\(role)@")])
        #expect(result.status == 1, "\(result.error)")
        #expect(result.error.contains("permission denied for schema public"), "\(result.error)")
        #expect(result.error.contains("the database must be owned by the user tandem connects as"), "\(result.error)")
    }
}
