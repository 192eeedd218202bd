/// Writes run just before a transaction's `COMMIT`, outside every savepoint (decisions E26).
///
/// Why: an FTS5 table flushes what it holds in memory to a new segment of its index at every
/// `SAVEPOINT` and `RELEASE` once it is written in a transaction, and the writer runs each job
/// (and the store each record) in a savepoint. A full-text row written inside them cost each
/// create a segment of its own and the merges that follow: about 10% of a create's
/// instructions. Written after the last savepoint, a whole group commit's rows make one.
extension SQLiteConnection {
    /// A statement kept for ``flushWritesBeforeCommit()``.
    struct DeferredWrite {
        var sql: String
        var arguments: [SQLiteValue]
        /// Whether ``refusesTextWithNUL`` was off when it was deferred.
        var allowsTextWithNUL: Bool
        /// A query that must return a row, then, for the write to run.
        var condition: (sql: String, arguments: [SQLiteValue])?
    }

    /// Runs `sql` with `arguments` just before the open transaction commits, after the
    /// statements deferred before it; at once outside a transaction. A savepoint rolled back
    /// drops what was deferred inside it (``writesBeforeCommitMark`` and
    /// ``dropWritesBeforeCommit(after:)``), as does a rolled-back transaction. The statement
    /// must not depend on anything but the data it will find then: later writes of the same
    /// transaction may come between: `condition`, a query, must then return a row for it to run.
    /// (A separate query, not `INSERT … SELECT … WHERE`: SQLite opens a statement savepoint for
    /// a write that may touch several rows, and FTS5 writes out its pending segment at each.)
    ///
    /// - Throws: ``SQLiteError`` only when run at once; deferred, a failure fails the commit.
    public func runBeforeCommit(_ sql: String, _ arguments: [SQLiteValue],
                                if condition: (sql: String, arguments: [SQLiteValue])? = nil) throws(SQLiteError) {
        guard isInTransaction else {
            if let condition, try firstRow(condition.sql, condition.arguments, { _ in true }) == nil { return }
            return try run(sql, arguments)
        }
        writesBeforeCommit.append(DeferredWrite(sql: sql, arguments: arguments, allowsTextWithNUL: !refusesTextWithNUL,
                                                condition: condition))
    }

    /// How many writes are deferred now: the mark to drop back to when a savepoint rolls back.
    public var writesBeforeCommitMark: Int { writesBeforeCommit.count }

    /// Drops the writes deferred after `mark` (their savepoint was rolled back).
    public func dropWritesBeforeCommit(after mark: Int) {
        if writesBeforeCommit.count > mark { writesBeforeCommit.removeSubrange(mark...) }
    }

    /// Runs the deferred writes in order and forgets them; called right before `COMMIT`.
    ///
    /// - Throws: the first failure; the writes are forgotten all the same (the caller rolls back).
    public func flushWritesBeforeCommit() throws(SQLiteError) {
        let writes = writesBeforeCommit
        writesBeforeCommit.removeAll()
        let refuses = refusesTextWithNUL
        defer { refusesTextWithNUL = refuses }
        for write in writes {
            refusesTextWithNUL = refuses && !write.allowsTextWithNUL
            if let condition = write.condition, try firstRow(condition.sql, condition.arguments, { _ in true }) == nil { continue }
            try run(write.sql, write.arguments)
        }
    }

    /// Forgets the deferred writes (the transaction is rolled back).
    func dropWritesBeforeCommit() { writesBeforeCommit.removeAll() }
}
