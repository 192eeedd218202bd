import TandemCore
import TandemSQLite
import TandemStore

/// SQL for "`column` is one of these values" whose text does not depend on how many values
/// there are, so a client choosing a list's length cannot make the server prepare (and cache,
/// in every connection) a new statement each time (issue 14).
///
/// Texts and integers travel as one JSON array bound to a single parameter and read back with
/// `json_each`: `column IN (SELECT value FROM json_each(?))`. JSON carries both exactly. Reals,
/// blobs and texts holding NUL do not survive JSON in SQLite 3.40 (its decimal parser rounds
/// some doubles differently from the binary value; a NUL ends a string), so those are bound as
/// ordinary parameters, padded to the next power of two by repeating the last value: at most
/// one extra shape per doubling, and repeating a member changes neither `IN` nor `NOT IN`.
enum BoundValueList {
    /// `(sql, arguments)` true when `column` equals one of `values`; `"0"` for an empty list.
    static func membership(_ column: String, _ values: [SQLiteValue]) -> (sql: String, arguments: [SQLiteValue]) {
        var json: [JSONValue] = []
        var exact: [SQLiteValue] = []
        for value in values {
            switch value {
            case .integer(let number): json.append(.int(number))
            case .text(let text) where !text.utf8.contains(0): json.append(.string(text))
            default: exact.append(value)
            }
        }
        var terms: [String] = []
        var arguments: [SQLiteValue] = []
        if !json.isEmpty {
            terms.append("\(column) IN (SELECT value FROM json_each(?))")
            arguments.append(.text(JSONWriter.string(.array(json))))
        }
        if let last = exact.last {
            var width = 1
            while width < exact.count { width *= 2 }
            exact += Array(repeating: last, count: width - exact.count)
            terms.append("\(column) IN (\(Array(repeating: "?", count: width).joined(separator: ",")))")
            arguments += exact
        }
        switch terms.count {
        case 0: return ("0", [])
        case 1: return (terms[0], arguments)
        default: return ("(" + terms.joined(separator: " OR ") + ")", arguments)
        }
    }

    /// Texts as one JSON array for `json_each(?)`, for lists the server builds itself (share
    /// names, URLs, hosts) whose values never hold NUL.
    static func jsonText(_ texts: [String]) -> SQLiteValue {
        .text(JSONWriter.string(.array(texts.map(JSONValue.string))))
    }
}
