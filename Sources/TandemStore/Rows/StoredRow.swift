/// One row of a query result, as either store's driver hands it over: what the shared row
/// decoders (`RecordRows`, `ShareRows`, `SubscriptionRows`, `ConversationRows`) read, so both
/// stores turn the same columns into the same values (decisions P44).
///
/// Columns are 0-based. `TandemStoreSQLite` conforms `SQLiteStatement` (its reads never throw;
/// NULL reads as 0 or empty), `TandemStorePostgres` conforms `PostgresRow` (a read of NULL or of
/// a column of another type throws `typeMismatch`). A decoder reads a nullable column only
/// through `optionalString`/`optionalInt64`, so the two answer alike.
package protocol StoredRow {
    /// Whether the column is SQL NULL.
    func isNull(_ column: Int) -> Bool
    /// The column as an integer (PostgreSQL `bigint`, SQLite `INTEGER`).
    func int64(_ column: Int) throws -> Int64
    /// The column as text.
    func string(_ column: Int) throws -> String
    /// The column's bytes (PostgreSQL `bytea`, SQLite `BLOB`).
    func bytes(_ column: Int) throws -> [UInt8]
}

extension StoredRow {
    /// The column as text, nil for NULL.
    package func optionalString(_ column: Int) throws -> String? { isNull(column) ? nil : try string(column) }

    /// The column as an integer, nil for NULL.
    package func optionalInt64(_ column: Int) throws -> Int64? { isNull(column) ? nil : try int64(column) }

    /// An integer column that holds a flag (0 or 1 in both schemas): whether it is not 0.
    package func flag(_ column: Int) throws -> Bool { try int64(column) != 0 }
}
