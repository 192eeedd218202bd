import TandemCore

/// Turns a record's fields into `field_index` rows and `record_references` rows.
///
/// Slots: 0 the value (one row per distinct list member; a location's latitude), 2 a lowercased
/// search token of a string, 3 a location's longitude, 9 a marker that the field is present (so
/// negated comparators can require presence, and empty lists are found).
enum FieldIndexer {
    static let valueSlot: Int64 = 0
    static let tokenSlot: Int64 = 2
    static let longitudeSlot: Int64 = 3
    static let presenceSlot: Int64 = 9

    struct Row: Hashable {
        var field: String
        var slot: Int64
        var value: SQLiteValue
    }

    static func rows(for fields: [String: FieldValue]) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(fields.count * 2)
        for (name, value) in fields {
            rows.append(Row(field: name, slot: presenceSlot, value: .null))
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
                    for token in tokens(of: s) { add(Row(field: name, slot: tokenSlot, value: .text(token)), unique: false) }
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
        }
        return rows
    }

    /// Search tokens: maximal runs of letters and digits, lowercased (CONTAINS_*_TOKENS).
    static func tokens(of text: String) -> [String] {
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
    static func references(in fields: [String: FieldValue]) -> [Reference] {
        var result: [Reference] = []
        for value in fields.values {
            for element in value.elements {
                if case .reference(let r) = element { result.append(r) }
            }
        }
        return result
    }
}
