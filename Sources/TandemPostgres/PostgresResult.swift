internal import CPostgres

/// A libpq result (`PGresult`), cleared when the last reference goes.
final class PostgresResult {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { PQclear(pointer) }

    var rowCount: Int { Int(PQntuples(pointer)) }
    var columnCount: Int { Int(PQnfields(pointer)) }

    /// Rows the command touched (`INSERT`, `UPDATE`, `DELETE`, …), from its command tag.
    var affectedRows: Int { Int(String(cString: PQcmdTuples(pointer))) ?? 0 }

    /// The command tag: `INSERT 0 1`, `COMMIT`, `ROLLBACK`.
    var commandTag: String { String(cString: PQcmdStatus(pointer)) }
}
