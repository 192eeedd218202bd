package import TandemCore
internal import Foundation
internal import TandemCrypto

/// Turns a record's fields into `field_index` rows and `record_references` rows, for both
/// stores (SQLite writes a row's value to its untyped `value`, PostgreSQL to the column of its
/// type, decisions P18).
///
/// Slots: 0 the value (one row per distinct list member; a location's latitude), 3 a location's
/// longitude, 9 a marker that the field is present though it has no value row (an empty list,
/// an asset), so negated comparators can require presence (`presenceSlots`: a row in slot 0 or
/// 9) and empty lists are found. Records saved before decisions E31 also have a slot 9 row
/// beside their value rows, which reads the same. Slot 2 (search tokens) is retired: SEARCHABLE
/// fields go to the full-text table `field_search` instead (`searchBody`).
package enum FieldIndexer {
    package static let valueSlot: Int64 = 0
    package static let longitudeSlot: Int64 = 3
    package static let presenceSlot: Int64 = 9
    /// The slots whose rows say a record has the field: its value rows, or the marker of a field
    /// without any (decisions E31).
    package static let presenceSlots: [Int64] = [valueSlot, presenceSlot]

    /// An indexed value: one of SQLite's storage classes, one of PostgreSQL's `value_*` columns.
    package enum Value: Hashable, Sendable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
    }

    package struct Row: Hashable, Sendable {
        package var field: String
        package var slot: Int64
        package var value: Value
    }

    /// The rows of the fields `including` accepts (those the schema marks QUERYABLE or SORTABLE).
    package static func rows(for fields: [String: FieldValue], including: (String) -> Bool = { _ in true }) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(fields.count * 2)
        for (name, value) in fields where including(name) {
            let first = rows.count
            // Only lists and token runs can repeat a value; scalars skip the hashing.
            var seen = Set<Row>()
            let mayRepeat = value.type.isList
            func add(_ row: Row, unique: Bool) {
                if unique || seen.insert(row).inserted { rows.append(row) }
            }
            for element in value.elements {
                switch element {
                case .string(let s):
                    add(Row(field: name, slot: valueSlot, value: .text(s)), unique: !mayRepeat)
                case .int64(let i), .timestamp(let i):
                    add(Row(field: name, slot: valueSlot, value: .integer(i)), unique: !mayRepeat)
                case .double(let d):
                    add(Row(field: name, slot: valueSlot, value: .real(d)), unique: !mayRepeat)
                case .bytes(let b):
                    add(Row(field: name, slot: valueSlot, value: .blob(b)), unique: !mayRepeat)
                case .reference(let r):
                    add(Row(field: name, slot: valueSlot, value: .text(r.recordName)), unique: !mayRepeat)
                case .location(let l):
                    add(Row(field: name, slot: valueSlot, value: .real(l.latitude)), unique: !mayRepeat)
                    add(Row(field: name, slot: longitudeSlot, value: .real(l.longitude)), unique: !mayRepeat)
                case .asset, .list:
                    break
                }
            }
            // A value row already says the field is there; only a field without one is marked.
            if rows.count == first { rows.append(Row(field: name, slot: presenceSlot, value: .null)) }
        }
        return rows
    }

    /// Most bytes of a record's full-text entry: its distinct terms and a separator after each
    /// (decisions P80). PostgreSQL keeps at most 1 MiB of lexemes in one `tsvector` and, past it,
    /// stored scrambled lexemes without a word (review 49); the same limit on both stores keeps
    /// their answers the same.
    package static let searchBodyLimit = 1_000_000

    /// The longest term kept as it is, in bytes (its field's 16-character tag included); a longer
    /// one is stored and searched as its digest (``searchTerm(_:field:)``). PostgreSQL refuses a
    /// longer `tsquery` word (2,047 bytes) and stored longer lexemes cut short (review 49).
    package static let longestTerm = 512

    /// The full-text entry of a record: every distinct term of its `searchable` string fields
    /// (``searchTerm(_:field:)``), sorted, a space apart; nil when there are none.
    /// - Throws: `LIMIT_EXCEEDED` when the entry would be larger than ``searchBodyLimit`` bytes,
    ///   naming the size: the record is refused rather than indexed in part (P80).
    package static func searchBody(for fields: [String: FieldValue], searchable: Set<String>) throws(CloudKitError) -> String? {
        guard !searchable.isEmpty else { return nil }
        var terms = Set<String>()
        for (name, value) in fields where searchable.contains(name) {
            for case .string(let s) in value.elements {
                for token in tokens(of: s) { terms.insert(searchTerm(token, field: name)) }
            }
        }
        guard !terms.isEmpty else { return nil }
        let bytes = terms.reduce(0) { $0 + $1.utf8.count + 1 }
        guard bytes <= searchBodyLimit else {
            throw CloudKitError(.limitExceeded, "the SEARCHABLE fields of this record hold \(terms.count) distinct words, \(bytes) bytes "
                                + "once indexed (each word with a 17-byte field tag); the full-text index takes at most \(searchBodyLimit) bytes a record")
        }
        return terms.sorted().joined(separator: " ")
    }

    /// The full-text term of `token` in field `field`: the field's tag and the token, or, for a
    /// term longer than ``longestTerm`` bytes, another tag of the field (``tag(_:)`` of NUL and
    /// the name, which no field name holds) and the token's SHA-256 in hex: still whole-word
    /// matching, on both stores alike (P80).
    package static func searchTerm(_ token: String, field: String) -> String {
        let term = tag(field) + token
        guard term.utf8.count > longestTerm else { return term }
        return tag("\u{0}" + field) + Digest.sha256(Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// 16 hex digits of FNV-1a (64-bit): a stable, letters-and-digits-only name for a field
    /// (a token prefix the `ascii` tokenizer keeps whole) or an index.
    package static func tag(_ name: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The distinct tokens of a CONTAINS_*_TOKENS operand, sorted, as both stores' query
    /// planners search for them.
    ///
    /// - Throws: `BAD_REQUEST` when the operand holds U+0000: refused on both stores alike
    ///   (decisions P67); no token can hold it, and PostgreSQL's `tsquery` cannot.
    ///   `LIMIT_EXCEEDED` past `Limits.valuesPerFilter` (1,000) distinct words, as a list
    ///   filter's values: PostgreSQL failed 500 on a `tsquery` of about 35,000 (review 50).
    package static func searchTokens(of operand: String) throws(CloudKitError) -> [String] {
        guard !operand.unicodeScalars.contains("\u{0}") else {
            throw CloudKitError.badRequest("a CONTAINS_ALL_TOKENS or CONTAINS_ANY_TOKENS value cannot contain U+0000 (NUL): tokens are letters and digits")
        }
        let tokens = Array(Set(tokens(of: operand))).sorted()
        guard tokens.count <= Limits.valuesPerFilter else {
            throw CloudKitError(.limitExceeded, "a CONTAINS_ALL_TOKENS or CONTAINS_ANY_TOKENS value may hold at most \(Limits.valuesPerFilter) "
                                + "distinct words; this one holds \(tokens.count)")
        }
        return tokens
    }

    /// Search tokens: maximal runs of letters and digits, lowercased (CONTAINS_*_TOKENS).
    package static func tokens(of text: String) -> [String] {
        var result: [String] = []
        var current = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                result.append(current.lowercased())
                current = ""
            }
        }
        if !current.isEmpty { result.append(current.lowercased()) }
        return result
    }

    /// Every reference in the fields, with its target's record name and action.
    package static func references(in fields: [String: FieldValue]) -> [Reference] {
        var result: [Reference] = []
        for value in fields.values {
            for element in value.elements {
                if case .reference(let r) = element { result.append(r) }
            }
        }
        return result
    }
}

extension FieldType {
    /// Whether values of this type are lists (`*_LIST`).
    package var isList: Bool {
        if case .list = self { return true }
        return false
    }
}
