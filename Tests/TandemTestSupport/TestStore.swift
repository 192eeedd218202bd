public import Foundation
import Synchronization

/// Which store the end-to-end tests' `tandem` processes open (decisions P38): SQLite in each
/// data directory, or, with `TANDEM_TEST_STORE=postgres` in the environment, a database of the
/// test process's shared ``PostgresCluster``: one fresh database per data directory, the same
/// one every time that directory is named, so a server and the admin commands run against its
/// directory share their data as they do with SQLite.
///
/// ```swift
/// let arguments = try TestStore.adding(["container", "create", id, "--data", directory])
/// // SQLite: unchanged; PostgreSQL: … "--data", directory, "--store", "postgres://…/test_ab12cd34"
/// ```
///
/// Every place that starts `tandem` with `--data` passes its arguments through ``adding(_:)``
/// (``TandemProcess`` does for admin commands and servers); suites about SQLite itself are
/// skipped under the switch with their reason.
public enum TestStore {
    /// The environment variable that selects the store: `postgres`, or unset for SQLite.
    public static let variable = "TANDEM_TEST_STORE"

    /// Whether the tests run against PostgreSQL.
    public static let isPostgres: Bool = {
        switch ProcessInfo.processInfo.environment[variable] {
        case nil, "", "sqlite": return false
        case "postgres", "postgresql": return true
        case let other?: preconditionFailure("\(variable) must be postgres or sqlite, not \(other)")
        }
    }()

    /// The database URL of each data directory (standardised path) handed out so far.
    private static let databases = Mutex<[String: String]>([:])

    /// The PostgreSQL URL for `dataDirectory`, created on first use.
    /// - Throws: when the shared cluster cannot start or the database cannot be created.
    public static func url(forDataDirectory dataDirectory: String) throws -> String {
        let key = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        if let known = databases.withLock({ $0[key] }) { return known }
        // createdb runs outside the lock; a racing twin's database is simply left unused.
        let created = try PostgresCluster.shared().createDatabase()
        return databases.withLock { known in
            if let winner = known[key] { return winner }
            known[key] = created
            return created
        }
    }

    /// `arguments` with `--store URL` added after `--data DIR` under the switch, unless they name
    /// a store already; unchanged otherwise (and without `--data`).
    /// - Throws: as ``url(forDataDirectory:)``.
    public static func adding(_ arguments: [String]) throws -> [String] {
        guard isPostgres, !arguments.contains(where: { $0 == "--store" || $0.hasPrefix("--store=") }) else { return arguments }
        var data: String?
        for (index, argument) in arguments.enumerated() {
            if argument == "--data", index + 1 < arguments.count { data = arguments[index + 1] }
            if argument.hasPrefix("--data=") { data = String(argument.dropFirst("--data=".count)) }
        }
        guard let data else { return arguments }
        return arguments + ["--store", try url(forDataDirectory: data)]
    }
}
