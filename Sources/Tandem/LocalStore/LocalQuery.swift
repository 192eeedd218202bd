internal import Foundation
internal import TandemCore
internal import TandemSQLite

/// A `Query` as SQL over the local store's rows: fields are read with `json_extract` from the
/// record text (`$.fields."name".value`), so comparisons follow SQLite's (strings by bytes,
/// numbers numerically). Built once per call; the statement is cached by its text.
struct LocalQuery {
    var sql: String
    var arguments: [SQLiteValue]

    init(query: Query, scopes: Set<Database.Scope>, limit: Int?) throws(TandemError) {
        let scopeList = scopes.map(\.rawValue).sorted()
        var conditions = ["record_type = ?", "scope IN (\(scopeList.map { _ in "?" }.joined(separator: ", ")))"]
        var arguments: [SQLiteValue] = [.text(query.recordType)] + scopeList.map { .text($0) }
        for filter in query.filters.map(\.wire) {
            let (column, columnArguments) = try Self.column(filter.field, value: filter.value)
            let op: String
            switch filter.comparator {
            case .equals: op = "="
            case .notEquals: op = "<>"
            case .lessThan: op = "<"
            case .lessThanOrEquals: op = "<="
            case .greaterThan: op = ">"
            case .greaterThanOrEquals: op = ">="
            case .beginsWith:
                guard case .string(let prefix) = filter.value else { throw TandemError(.invalidArguments, "BEGINS_WITH needs a string") }
                conditions.append("substr(\(column), 1, ?) = ?")
                arguments += columnArguments + [.integer(Int64(prefix.count)), .text(prefix)]
                continue
            case .in, .notIn:
                guard case .list(let items, _) = filter.value else { throw TandemError(.invalidArguments, "\(filter.comparator.rawValue) needs a list") }
                let values = try items.map(Self.value)
                let not = filter.comparator == .notIn ? "NOT " : ""
                conditions.append(values.isEmpty ? (not.isEmpty ? "0" : "1")
                                  : "\(column) \(not)IN (\(values.map { _ in "?" }.joined(separator: ", ")))")
                if !values.isEmpty { arguments += columnArguments + values }
                continue
            default:
                throw TandemError(.invalidArguments, "the local store does not evaluate \(filter.comparator.rawValue); query the server")
            }
            conditions.append("\(column) \(op) ?")
            arguments += columnArguments + [try Self.value(filter.value)]
        }
        var order: [String] = []
        for sort in query.sort.map(\.wire) {
            guard sort.relativeLocation == nil else { throw TandemError(.invalidArguments, "the local store does not sort by distance") }
            let (column, columnArguments) = try Self.column(sort.field, value: nil)
            order.append("\(column) \(sort.ascending ? "ASC" : "DESC")")
            arguments += columnArguments
        }
        order.append("record_name")
        var sql = "SELECT body, scope FROM record WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order.joined(separator: ", "))"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        self.sql = sql
        self.arguments = arguments
    }

    /// The SQL expression reading a field, and its arguments.
    private static func column(_ field: QueryField, value: FieldValue?) throws(TandemError) -> (String, [SQLiteValue]) {
        switch field {
        case .user(let name):
            // The path is written into the SQL (not bound) so that an index made by
            // `LocalStore.Configuration.indexes` has the same expression text.
            var suffix = ""
            if case .reference = value { suffix = ".recordName" }
            if case .list(_, .reference)? = value { suffix = ".recordName" }
            return (fieldExpression(name, suffix: suffix), [])
        case .system(.recordName): return ("record_name", [])
        case .system(.createdTimestamp): return ("json_extract(body, '$.created.timestamp')", [])
        case .system(.modifiedTimestamp): return ("json_extract(body, '$.modified.timestamp')", [])
        case .system(let other): throw TandemError(.invalidArguments, "the local store does not query \(other.rawValue)")
        }
    }

    /// `json_extract(body, '$.fields."name".value')` with the name quoted for JSON path and SQL.
    static func fieldExpression(_ name: String, suffix: String = "") -> String {
        let path = "$.fields.\"" + name.replacingOccurrences(of: "\"", with: "\\\"") + "\".value" + suffix
        return "json_extract(body, '" + path.replacingOccurrences(of: "'", with: "''") + "')"
    }

    private static func value(_ value: FieldValue) throws(TandemError) -> SQLiteValue {
        switch value {
        case .string(let s): .text(s)
        case .int64(let i): .integer(i)
        case .double(let d): .real(d)
        case .timestamp(let t): .integer(t)
        case .reference(let r): .text(r.recordName)
        default: throw TandemError(.invalidArguments, "the local store compares strings, numbers, dates and references only")
        }
    }
}
