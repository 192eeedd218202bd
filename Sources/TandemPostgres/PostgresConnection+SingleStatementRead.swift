/// A read of one statement without a transaction (decisions P72): PostgreSQL runs a statement
/// sent outside a transaction in a transaction of its own, with its own snapshot, so a read
/// whose body runs one statement needs neither `BEGIN` nor `COMMIT`: one statement on the
/// server where a read-only transaction runs three (pgbench `-S` runs one).
extension PostgresConnection {
    /// Runs `body` outside any transaction, allowing it one statement. A second statement (or a
    /// transaction, or a command) is refused before it is sent, with an error whose
    /// ``PostgresError/needsSnapshot`` is true: the caller runs `body` again in a read-only
    /// transaction (``PostgresPool/readSingleStatement(_:)``), since two statements outside a
    /// transaction would see two snapshots. A first statement that finds the connection dead
    /// fails with ``PostgresError/isAtReadStart`` set, as a read-only transaction's does (P68).
    ///
    /// - Throws: what `body` throws; ``PostgresError`` as above.
    func singleStatementRead<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        precondition(depth == 0 && singleStatementRead == nil, "a single-statement read runs outside any transaction")
        _ = try settled()
        singleStatementRead = .allowed
        defer { singleStatementRead = nil }
        do {
            return try body(self)
        } catch var error as PostgresError where error.kind == .unavailable && singleStatementRead == .sent {
            error.isAtReadStart = true
            throw error
        }
    }

    /// Counts a statement of a single-statement read before it is sent: the first passes, any
    /// other is refused. Does nothing outside such a read.
    func admitToSingleStatementRead(_ sql: String) throws(PostgresError) {
        guard let state = singleStatementRead else { return }
        guard state == .allowed else {
            var error = PostgresError(kind: .other, message: "a read of one statement ran a second one", sql: sql)
            error.needsSnapshot = true
            throw error
        }
        singleStatementRead = .sent
    }

    /// Marks the single-statement read's one statement answered.
    func singleStatementAnswered() {
        if singleStatementRead == .sent { singleStatementRead = .answered }
    }
}

/// Where a single-statement read is (``PostgresConnection/singleStatementRead(_:)``).
enum SingleStatementRead {
    /// No statement sent yet.
    case allowed
    /// The statement was sent and no answer read yet (a failure now is the first statement's).
    case sent
    /// The statement was answered: any other is refused.
    case answered
}
