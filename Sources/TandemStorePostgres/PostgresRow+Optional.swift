internal import TandemPostgres
internal import TandemStore

/// PostgreSQL's row for the shared row decoders (decisions P44); `optionalString`,
/// `optionalInt64` and `flag` come from `StoredRow`.
extension PostgresRow: StoredRow {}

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
