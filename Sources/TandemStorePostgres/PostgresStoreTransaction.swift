internal import TandemPostgres
internal import TandemStore

/// The reading and writing primitives over one PostgreSQL connection inside a transaction
/// (`read`: REPEATABLE READ READ ONLY; `write`: SERIALIZABLE).
struct PostgresStoreTransaction: StoreWriting {
    let db: PostgresConnection
    /// What this transaction logged in the change feeds (`loggedChanges`).
    let changeLog = TransactionChangeLog()

    init(_ connection: PostgresConnection) { db = connection }
}

extension PostgresStoreTransaction {
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let logged = changeLog.count
        do {
            return try db.transaction { _ in try body() }
        } catch {
            changeLog.truncate(to: logged)
            throw error
        }
    }

    func loggedChanges() -> [LoggedChange] { changeLog.all }
}
