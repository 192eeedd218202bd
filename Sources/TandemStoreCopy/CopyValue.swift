/// A value on its way between the stores, in the classes both hold: SQLite's storage classes
/// (booleans do not occur: the schema has none, P17).
enum CopyValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes([UInt8])
}

/// What a logical column holds, the same on both sides (decisions P41).
enum CopyKind: String, Hashable, Sendable {
    /// SQLite `INTEGER`, PostgreSQL `bigint`.
    case integer
    /// SQLite `REAL`, PostgreSQL `double precision`.
    case real
    /// SQLite `TEXT`, PostgreSQL `text` (any collation).
    case text
    /// SQLite `BLOB`, PostgreSQL `bytea`.
    case bytes
    /// An untyped SQLite column (`field_index.value`) and PostgreSQL's `X_integer`, `X_real`,
    /// `X_text`, `X_bytes` columns, at most one of them set (P18).
    case any
    /// A full-text body: SQLite's FTS5 `field_search.body` (tokens separated by spaces) and
    /// PostgreSQL's `tsvector` (P17). Carried as `.text`: the distinct tokens, sorted bytewise,
    /// joined by one space, the form both sides can rebuild their index from.
    case tokens
}

/// One column of a table as both sides see it.
struct CopyColumn: Hashable, Sendable {
    var name: String
    var kind: CopyKind
}

/// A table as both sides see it: columns sorted by name, and the column whose numbers the
/// database hands out (SQLite's `INTEGER PRIMARY KEY`, PostgreSQL's identity), if any.
struct CopyTable: Hashable, Sendable {
    var name: String
    var columns: [CopyColumn]
    var identity: String?

    init(name: String, columns: [CopyColumn], identity: String?) {
        self.name = name
        self.columns = columns.sorted { $0.name < $1.name }
        self.identity = identity
    }
}

extension CopyValue {
    /// This value as a column of `kind` holds it, or nil when it cannot be (a text in an
    /// integer column). SQLite may hand back an integral REAL as an integer, and a BLOB column
    /// may hold text; tokens are put in their canonical order.
    func normalised(to kind: CopyKind) -> CopyValue? {
        switch (self, kind) {
        case (.null, _), (_, .any), (.integer, .integer), (.real, .real), (.text, .text), (.bytes, .bytes): return self
        case (.integer(let n), .real): return .real(Double(n))
        case (.text(let s), .bytes): return .bytes(Array(s.utf8))
        case (.text(let s), .tokens): return .text(Self.canonicalTokens(s))
        default: return nil
        }
    }

    /// The distinct space-separated tokens of `body`, sorted bytewise, joined by one space.
    static func canonicalTokens(_ body: String) -> String {
        let tokens = Set(body.split(separator: " ", omittingEmptySubsequences: true).map(String.init))
        return tokens.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.joined(separator: " ")
    }

    /// What a value is called in messages.
    var className: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "a text"
        case .bytes: "a byte string"
        }
    }
}
