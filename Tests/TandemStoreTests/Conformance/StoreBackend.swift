import Foundation
import Testing
import TandemStore
import TandemSQLite
import TandemStoreSQLite
import TandemStorePostgres
import TandemTestSupport

/// The stores the conformance suite runs against (issue 19 item 2; decisions P5). Every
/// conformance test takes a backend argument and speaks to it as `any Store` only, so a backend
/// passes by keeping the protocols' promises, not by sharing SQLite's tables.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// `SQLiteStore` in a fresh temporary data directory.
    case sqlite
    /// `PostgresStore` on a fresh database of the test process's cluster (`PostgresCluster`),
    /// its asset folders in a fresh temporary directory.
    case postgres

    var testDescription: String { rawValue }

    /// What the conformance suite checks, by area; each test names the area it belongs to.
    enum Area: Sendable {
        case records, queries, changeFeeds, failure, concurrency, shares, subscriptions, schemas,
             links, conversations, highlights, identity, sessions
        /// Containers, accounts and tokens (`containerExists`, `addUser`, `grant`, …).
        case accounts
        /// Collaborations, notices and membership prompts.
        case collaboration
        /// The web console's reads and writes, and server-to-server keys.
        case console
        /// Console reads of accounts made by sign-up or deleted (`addVerifiedUser`, `addConsent`,
        /// `eraseAccount` with the console's methods); joins `postgresAreas` with those translations.
        case consoleAccounts
    }

    /// The areas the PostgreSQL store implements completely so far (decisions P24): it joins
    /// their tests; the rest run on SQLite alone until their translation lands.
    static let postgresAreas: Set<Area> = [.accounts, .identity, .sessions, .highlights, .links, .records, .queries, .schemas, .changeFeeds, .failure, .concurrency, .subscriptions, .shares, .conversations,
                                                .collaboration, .console, .consoleAccounts]

    /// The backends a test of `area` runs against.
    static func all(for area: Area) -> [StoreBackend] {
        postgresAreas.contains(area) ? allCases : [.sqlite]
    }

    /// A fresh, empty store, closed and removed when `body` returns.
    func withStore<T>(_ body: (any Store) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-conformance-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        switch self {
        case .sqlite:
            let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 2)
            defer { store.close() }
            return try body(store)
        case .postgres:
            let url = try PostgresCluster.shared().createDatabase()
            let store = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 8))
            defer { store.close() }
            return try body(store)
        }
    }

    /// Two stores on one fresh database, as two nodes of a cluster (or a server and an admin
    /// command) open it: PostgreSQL only, the one store several processes share.
    /// `url` is the database's, for a connection of the test's own beside them.
    static func withTwoPostgresStores<T>(_ body: (any Store, any Store, _ url: String) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-conformance-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = try PostgresCluster.shared().createDatabase()
        let first = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 4))
        defer { first.close() }
        let second = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 4))
        defer { second.close() }
        return try body(first, second, url)
    }
}
