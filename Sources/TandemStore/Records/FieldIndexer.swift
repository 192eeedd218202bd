package import TandemCore

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

    /// The full-text entry of a record: every token of its `searchable` string fields, each
    /// prefixed with its field's `tag` so one row serves every field; nil when there are none.
    package static func searchBody(for fields: [String: FieldValue], searchable: Set<String>) -> String? {
        guard !searchable.isEmpty else { return nil }
        var terms: [String] = []
        for (name, value) in fields where searchable.contains(name) {
            let tag = tag(name)
            for case .string(let s) in value.elements {
                terms += tokens(of: s).map { tag + $0 }
            }
        }
        return terms.isEmpty ? nil : terms.joined(separator: " ")
    }

    /// The full-text term of `token` in field `field` (what `searchBody` wrote).
    package static func searchTerm(_ token: String, field: String) -> String { tag(field) + token }

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
    package static func searchTokens(of operand: String) throws(CloudKitError) -> [String] {
        guard !operand.unicodeScalars.contains("\u{0}") else {
            throw CloudKitError.badRequest("a CONTAINS_ALL_TOKENS or CONTAINS_ANY_TOKENS value cannot contain U+0000 (NUL): tokens are letters and digits")
        }
        return Array(Set(tokens(of: operand))).sorted()
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
