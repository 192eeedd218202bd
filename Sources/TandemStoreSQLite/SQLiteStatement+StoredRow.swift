import TandemSQLite
import TandemStore

/// SQLite's current row for the shared row decoders (decisions P44). SQLite reads never fail:
/// NULL reads as 0, "" or no bytes, which is why decoders read nullable columns through
/// `optionalString`/`optionalInt64`.
extension SQLiteStatement: StoredRow {
    package func isNull(_ column: Int) -> Bool { isNull(Int32(column)) }
    package func int64(_ column: Int) -> Int64 { int64(Int32(column)) }
    package func string(_ column: Int) -> String { text(Int32(column)) }
    package func bytes(_ column: Int) -> [UInt8] { blob(Int32(column)) }
}
