import TandemStore
import TandemStorePostgres
import TandemSQLite
import TandemStoreSQLite
import TandemTestSupport

/// The store of `directory` opened in the test process, the one the tests' `tandem` commands
/// open for that directory: SQLite there, or its PostgreSQL database under the test store
/// switch (`TestStore`, decisions P38). For tests that prepare data in process and then run a
/// command on it.
func dataDirectoryStore(_ directory: String) throws -> any Store {
    guard TestStore.isPostgres else { return try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1) }
    return try PostgresStore(url: try TestStore.url(forDataDirectory: directory), options: PostgresStore.Options(directory: directory, poolSize: 1))
}
