import Foundation
import Testing
import TandemTestSupport

/// `--store` on `tandem serve` and the admin commands (decisions P36, P37): a postgres:// URL
/// or a directory; what is refused, and how an unreachable database is reported.
@Suite("tandem --store")
struct StoreOptionTests {
    /// A loopback port nothing listens on (bound, then released).
    static func closedPort() throws -> Int {
        try PostgresCluster.freePort()
    }

    static let refused: [(label: String, arguments: [String], message: String)] = [
        ("another scheme", ["serve", "--store", "mysql://u:pw@127.0.0.1/db"], "--store takes a postgres:// (or postgresql://) URL or a directory"),
        ("an empty value", ["container", "list", "--store="], "--store takes a postgres://"),
        ("SQLite's sync setting", ["serve", "--store", "postgres://u@127.0.0.1/db", "--synchronous", "normal"], "--synchronous is for a SQLite store"),
        ("SQLite's size cap", ["serve", "--store", "postgres://u@127.0.0.1/db", "--max-database-mib", "10"], "--max-database-mib is for a SQLite store"),
        ("a pool for SQLite", ["serve", "--store", "/nonexistent/tandem-data", "--pool-size", "4"], "--pool-size is for a PostgreSQL store"),
        ("a pool of none", ["serve", "--store", "postgres://u@127.0.0.1/db", "--pool-size", "0"], "--pool-size must be a number of connections"),
    ]

    @Test(arguments: refused)
    func aMalformedStoreSettingIsAUsageError(_ example: (label: String, arguments: [String], message: String)) throws {
        let directory = try ExitCleanup.temporaryDirectory("tandem-store-option")
        // A server that started after all stops when its standard input closes; other commands take no such option.
        let stop = example.arguments.first == "serve" ? ["--stop-on-stdin-eof"] : []
        let result = try runTandem(example.arguments + ["--data", directory] + stop)
        #expect(result.status == 64, "\(example.label): \(result.error)")
        #expect(result.error.hasPrefix(example.message), "\(example.label): \(result.error)")
        #expect(!result.error.contains("pw@"), "a URL's password is never repeated")
    }

    @Test(arguments: [["serve", "--stop-on-stdin-eof"], ["container", "list"], ["container", "create", "iCloud.com.example.x"],
                      ["token", "create", "--admin"]])
    func anUnreachableDatabaseIsOneLineAndExitOne(_ command: [String]) throws {
        let directory = try ExitCleanup.temporaryDirectory("tandem-store-option")
        let port = try Self.closedPort()
        let result = try runTandem(command + ["--data", directory, "--store", "postgres://tandem:hunter2@127.0.0.1:\(port)/tandem"])
        #expect(result.status == 1, "\(result.error)")
        let lines = result.error.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("error: the store cannot be reached: "), "\(result.error)")
        #expect(result.error.contains("Connection refused"), "\(result.error)")
        #expect(!result.error.contains("hunter2") && !result.error.contains("postgres://"), "\(result.error)")
        // libpq gives no SQLSTATE for a refused connection: no "-----" placeholder where it would be (P60).
        #expect(!result.error.contains("-----"), "\(result.error)")
    }

    @Test func aURLLibpqCannotParseIsReportedWithoutItsPassword() throws {
        let directory = try ExitCleanup.temporaryDirectory("tandem-store-option")
        let result = try runTandem(["container", "list", "--data", directory, "--store", "postgresql://tandem:hunter2@[::1/tandem"])
        #expect(result.status == 1, "\(result.error)")
        #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
        #expect(result.error.hasPrefix("error: the store cannot be reached: "), "\(result.error)")
        #expect(!result.error.contains("hunter2"), "\(result.error)")
    }

    @Test func theUsageNamesTheStoreAndThePool() throws {
        let result = try runTandem(["serve", "--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("--store postgres://") && result.output.contains("--pool-size"), "\(result.output)")
    }
}
