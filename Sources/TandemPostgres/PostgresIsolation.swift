/// A transaction's isolation level (PostgreSQL 15 documentation, 13.2 "Transaction Isolation").
///
/// Under `.repeatableRead` and `.serializable` a transaction that loses a race with another
/// fails with ``PostgresError/Kind/retryable`` and should be run again from its start
/// (``PostgresPool/transaction(_:attempts:_:)`` does so).
public enum PostgresIsolation: String, Sendable, Hashable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    /// `REPEATABLE READ` and `READ ONLY` in the `BEGIN` itself: one snapshot, no writes, one
    /// round trip fewer than `SET TRANSACTION READ ONLY` after it (decisions P47).
    case repeatableReadOnly = "REPEATABLE READ READ ONLY"
    case serializable = "SERIALIZABLE"

    /// Whether the transaction may not write: its `BEGIN` and `COMMIT` cost no round trip of
    /// their own (``PostgresConnection/transaction(_:_:)``, decisions P55).
    public var isReadOnly: Bool { self == .repeatableReadOnly }
}
