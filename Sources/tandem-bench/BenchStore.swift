import TandemSQLite

/// The store a figure's `tandem serve` runs on: SQLite in a fresh data directory at a
/// `synchronous` level, or a fresh database of the bench's PostgreSQL cluster (`BenchPostgres`).
enum BenchStore {
    case sqlite(SQLiteSynchronous)
    case postgres

    /// For section titles and table rows: `NORMAL`, `FULL` or `PostgreSQL`.
    var label: String {
        switch self {
        case .sqlite(let level): level.rawValue
        case .postgres: "PostgreSQL"
        }
    }

    /// A server on this store with the bench account prepared; `cleanup` removes what
    /// `start` made (the server is the caller's to stop first).
    struct Prepared {
        var server: ServerProcess
        var account: BenchAccount
        var cleanup: () -> Void
        /// The PostgreSQL database's URL; nil on SQLite.
        var postgresURL: String? = nil
    }

    /// Prepares a fresh store and its account, and a server (not yet started) over it.
    func prepare() throws -> Prepared {
        switch self {
        case .sqlite(let level):
            let directory = try BenchPaths.temporaryDirectory("serve-\(level.rawValue.lowercased())")
            let account = try BenchAccount.prepare(in: directory)
            return Prepared(server: ServerProcess(dataDirectory: directory, synchronous: level), account: account,
                            cleanup: { BenchPaths.remove(directory) })
        case .postgres:
            let url = try BenchPostgres.database()
            let directory = try BenchPaths.temporaryDirectory("serve-postgres")
            let account = try BenchAccount.prepare(postgresURL: url, directory: directory)
            return Prepared(server: ServerProcess(dataDirectory: directory, postgresURL: url), account: account,
                            cleanup: { BenchPaths.remove(directory) }, postgresURL: url)
        }
    }
}
