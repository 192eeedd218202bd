internal import TandemPostgres

extension PostgresRow {
    /// The column as a `String`, nil for NULL.
    func optionalString(_ column: Int) throws -> String? { isNull(column) ? nil : try string(column) }

    /// The column as an `Int64`, nil for NULL.
    func optionalInt64(_ column: Int) throws -> Int64? { isNull(column) ? nil : try int64(column) }
}

extension PostgresValue {
    /// `.text(value)`, or `.null` for nil.
    static func optional(_ value: String?) -> PostgresValue { value.map(PostgresValue.text) ?? .null }

    /// `.integer(value)`, or `.null` for nil.
    static func optional(_ value: Int64?) -> PostgresValue { value.map(PostgresValue.integer) ?? .null }
}

extension PostgresValue {
    /// `texts` as one `text[]` literal, for `= ANY($n::text[])`: one parameter whatever the
    /// list's length, so a list does not shape the SQL (issue 14). Each member is quoted, with
    /// `"` and `\` escaped (PostgreSQL's array input syntax).
    static func textArray(_ texts: [String]) -> PostgresValue {
        let members = texts.map { text in
            var quoted = "\""
            for character in text {
                if character == "\"" || character == "\\" { quoted.append("\\") }
                quoted.append(character)
            }
            return quoted + "\""
        }
        return .text("{" + members.joined(separator: ",") + "}")
    }
}
