import Foundation
import TandemPostgres
import TandemServer
import TandemStore
import TandemStorePostgres
import TandemStoreSQLite

/// Where the `tandem` command's store lives, and the one place it is opened (decisions P1, P36):
/// the server and the admin commands are handed an `any Store` and never name a backend.
///
/// `--store` names it: a `postgres://` or `postgresql://` URL (libpq's URI syntax: user,
/// password, host, port, database and `?` parameters such as `sslmode`), or a directory for
/// SQLite's `tandem.sqlite`. Without `--store`, the `--data` directory (the default, as before).
/// With PostgreSQL, `--data` still holds the files: assets, avatars (P20), the sync-token
/// secret and group session journals.
enum StoreLocation {
    /// `tandem.sqlite` in the directory, with the SQLite store's own settings
    /// (`--synchronous`, `--max-database-mib`).
    case directory(String, SQLiteStore.Options)
    /// A PostgreSQL database (the URL as given, never printed: it may hold a password), with
    /// the files in `options.directory` (the `--data` directory).
    case postgres(url: String, PostgresStore.Options)

    /// What `--store` names, before any backend setting is applied.
    enum Target: Equatable {
        case directory(String)
        case postgres(url: String)

        /// `--store VALUE` (nil: not given, so the `--data` directory).
        /// - Throws: `UsageError` for an empty value or a URL of another scheme (the value is not
        ///   repeated: a URL may hold a password).
        init(_ value: String?, data: String) throws {
            guard let value else { self = .directory(data); return }
            // Schemes are case-insensitive (RFC 3986): `POSTGRES://` is libpq's `postgres://`.
            if PostgresURL.isPostgres(value) {
                self = .postgres(url: PostgresURL.normalized(value))
            } else if value.contains("://") || value.isEmpty {
                throw UsageError("--store takes a postgres:// (or postgresql://) URL or a directory")
            } else {
                self = .directory(value)
            }
        }
    }

    /// The store an admin command opens: one short transaction at a time, one SQLite reader or
    /// one PostgreSQL connection.
    /// - Throws: `UsageError` for a bad `--store`.
    static func command(_ options: Options, data: String) throws -> StoreLocation {
        switch try Target(options.value("store"), data: data) {
        case .directory(let path): .directory(path, SQLiteStore.Options(readerCount: 1))
        case .postgres(let url): .postgres(url: url, PostgresStore.Options(directory: data, poolSize: 1))
        }
    }

    /// The directories a server on this store uses: `data`, and a SQLite store's own when apart.
    func directories(data: String) -> [String] {
        switch self {
        case .directory(let path, _): Self.standardized(path) == Self.standardized(data) ? [data] : [path, data]
        case .postgres: [data]
        }
    }

    /// The SQLite database file, when the store is one (admin commands that list must find it, F42).
    var sqliteFile: String? {
        switch self {
        case .directory(let path, _): path + "/tandem.sqlite"
        case .postgres: nil
        }
    }

    /// What the first-run hint passes as `--store` for this store when the data directory is
    /// `data` (P57): the URL without its password, a SQLite directory apart from `data`, or nil.
    func argument(data: String) -> StoreArgument? {
        switch self {
        case .postgres(let url, _): .postgres(PostgresURL.redacted(url))
        case .directory(let path, _) where Self.standardized(path) != Self.standardized(data): .directory(path)
        case .directory: nil
        }
    }

    /// Opens (creating or migrating) the store. A SQLite store is not opened in a directory that
    /// a PostgreSQL server uses (``PostgresMarker``; P57).
    /// - Throws: ``PostgresDataDirectoryError`` for that; ``StoreError`` when the database cannot
    ///   be opened or reached (`unavailable`: a refused or unknown host, a wrong password, no such
    ///   database, a malformed URL); a file error for the directory.
    func open() throws -> any Store {
        try refuseAPostgresDataDirectory()
        try refuseASQLiteDataDirectory()
        switch self {
        case .directory(let path, let options):
            return try SQLiteStore(directory: path, options: options)
        case .postgres(let url, let options):
            return try PostgresStore(url: url, options: options)
        }
    }

    /// Throws ``PostgresDataDirectoryError`` when this is a SQLite store in a directory that
    /// holds a PostgreSQL server's marker.
    func refuseAPostgresDataDirectory() throws {
        if case .directory(let path, _) = self, let url = PostgresMarker.url(in: path) {
            throw PostgresDataDirectoryError(directory: path, url: url)
        }
    }

    /// Throws ``SQLiteDataDirectoryError`` when this is a PostgreSQL store whose files would go
    /// into a directory holding a SQLite store (review 47: one mistaken `serve --store postgres://…
    /// --data DIR` marked a SQLite store's directory as PostgreSQL's and locked it out).
    func refuseASQLiteDataDirectory() throws {
        if case .postgres(_, let options) = self, FileManager.default.fileExists(atPath: options.directory + "/tandem.sqlite") {
            throw SQLiteDataDirectoryError(directory: options.directory)
        }
    }

    private static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

/// A PostgreSQL store given a SQLite store's directory as `--data`: the server would serve an
/// empty database beside data it never reads, and mark the directory as PostgreSQL's (P57).
struct SQLiteDataDirectoryError: Error, CustomStringConvertible {
    var directory: String

    var description: String {
        "\(directory) holds a SQLite store (\(directory)/tandem.sqlite), which a PostgreSQL store would not read: "
            + "give --data a directory of its own for the PostgreSQL store's files, and move the SQLite store's data with "
            + "tandem migrate --from \(directory) --to postgres://… --to-data NEWDIR"
    }
}

/// A command without `--store` on the data directory of a PostgreSQL server (P57): it would
/// make a SQLite store there that the server never reads. Exit status 1, not 64: the command
/// line is well formed, the directory's state refuses it (as F42's "no Tandem data in DIR").
struct PostgresDataDirectoryError: Error, CustomStringConvertible {
    var directory: String
    var url: String

    var description: String {
        "\(directory) is the data directory of a PostgreSQL store (\(directory)/\(PostgresMarker.fileName)): "
            + "add --store \(StoreArgument.postgres(url).shellWord) (the password from ~/.pgpass or PGPASSWORD); "
            + "without it this command would make a SQLite store the server never reads"
            + (FileManager.default.fileExists(atPath: directory + "/tandem.sqlite")
               ? "; if \(directory)/tandem.sqlite is the store you mean (the marker came from a mistaken start on PostgreSQL), "
                 + "remove \(directory)/\(PostgresMarker.fileName)" : "")
    }
}
