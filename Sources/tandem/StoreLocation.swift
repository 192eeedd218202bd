import TandemStore
import TandemStoreSQLite

/// Where the `tandem` command's store lives, and the one place it is opened (decisions P1): the
/// server and the admin commands are handed an `any Store` and never name a backend.
enum StoreLocation {
    /// `tandem.sqlite` in the data directory, with the SQLite store's own settings
    /// (`--synchronous`, `--max-database-mib`).
    case directory(String, SQLiteStore.Options)
    // A PostgreSQL database (`--database postgres://…`) is added here by the PostgreSQL store (issue 19).

    /// The data directory as an admin command opens it: one short transaction at a time, one reader.
    static func command(_ path: String) -> StoreLocation { .directory(path, SQLiteStore.Options(readerCount: 1)) }

    /// Opens (creating or migrating) the store.
    /// - Throws: ``StoreError`` when the database cannot be opened; a file error for the directory.
    func open() throws -> any Store {
        switch self {
        case .directory(let path, let options): try SQLiteStore(directory: path, options: options)
        }
    }
}
