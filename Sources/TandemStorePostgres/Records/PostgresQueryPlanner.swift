internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Translates a `Query` into PostgreSQL over `records` and `field_index` (SQLite:
/// `QueryPlanner.swift`, whose rules it keeps; decisions P25).
///
/// Every filter on a user field becomes `r.id IN (SELECT record_id FROM field_index …)` on the
/// `value_*` column of the value's type (P18), so range comparators stay within the value's
/// type class as in SQLite (numbers: integers and reals compare numerically; text bytewise,
/// `COLLATE "C"`). Negated comparators select records that have the field and do not meet the
/// positive condition. A sort on a user field orders by four keys, one per type class (bytes,
/// text, numbers as `float8`, integers exactly), NULLs first ascending and last descending:
/// SQLite's order of NULL, numbers, text and blobs. Keyset cursors hold those keys.
///
/// Nothing a client sends is written into the SQL text: values, zone keys and field names are
/// parameters (issue 14); value lists are padded to the next power of two by repeating their
/// last member, so a list's length shapes at most one statement per doubling. Text operands are
/// bound as `IndexedText` escapes them (P50), so a string holding U+0000 compares as on SQLite.
struct PostgresQueryPlanner {
    private(set) var sql = ""
    private(set) var arguments: [PostgresValue] = []
    /// Sort key expressions selected after the record columns, `r.zone_id` and `r.id`.
    private(set) var keyCount = 0
    private var allOfTerms = 0
    private let zoneKeys: [Int64]

    /// One ORDER BY expression and its direction.
    struct OrderTerm {
        var expression: String
        var ascending: Bool
    }

    /// - Throws: `LIMIT_EXCEEDED` past the query limits, `BAD_REQUEST` for a malformed filter or
    ///   sort, or a cursor that does not fit the query's order.
    init(query: Query, zoneKeys: [Int64], limit: Int, after cursor: QueryCursor? = nil,
         memberships: [String]? = nil) throws(CloudKitError) {
        guard query.filters.count <= Limits.filtersPerQuery else {
            throw CloudKitError(.limitExceeded, "a query takes at most \(Limits.filtersPerQuery) filters; got \(query.filters.count)")
        }
        guard query.sorts.count <= Limits.sortsPerQuery else {
            throw CloudKitError(.limitExceeded, "a query takes at most \(Limits.sortsPerQuery) sort descriptors; got \(query.sorts.count)")
        }
        self.zoneKeys = zoneKeys.isEmpty ? [-1] : zoneKeys
        var conditions = [inZones("r.zone_id"), "r.type = \(bind(.text(query.recordType)))"]
        for filter in query.filters {
            conditions.append(try condition(for: filter, recordType: query.recordType))
        }
        if let memberships, !memberships.isEmpty {
            conditions.append(membership("r.membership", memberships.map(PostgresValue.text), cast: "text"))
        }
        var order: [OrderTerm] = []
        for sort in query.sorts {
            order += try orderTerms(for: sort).map { OrderTerm(expression: $0, ascending: sort.ascending) }
        }
        keyCount = order.count
        if let cursor {
            guard cursor.keys.count == order.count else {
                throw .badRequest("continuationMarker does not fit this query's sort order")
            }
            conditions.append(after(cursor, order: order))
        }
        let orderBy = order.map { $0.expression + ($0.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST") } + ["r.id ASC"]
        sql = """
            SELECT \(RecordRows.recordColumns), r.zone_id, r.id\(order.map { ", " + $0.expression }.joined()) FROM records r
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(orderBy.joined(separator: ", ")) LIMIT \(bind(.integer(Int64(limit))))
            """
    }

    /// The cursor of a row the query returned (its columns after the record's 12, `r.zone_id`, `r.id`).
    static func cursor(_ row: PostgresRow, keyCount: Int) throws -> QueryCursor {
        let keys: [QueryCursor.Key] = try (0..<keyCount).map { index in
            let column = 14 + index
            if row.isNull(column) { return .null }
            switch try row.value(column) {
            case .null: return .null
            case .integer(let n): return .integer(n)
            case .double(let d): return .real(d)
            case .text(let t): return .text(t)
            case .bytes(let b): return .bytes(b)
            case .bool(let b): return .integer(b ? 1 : 0)
            }
        }
        return QueryCursor(keys: keys, recordKey: try row.int64(13))
    }

    // MARK: Parameters

    /// `$n` for `value`, cast to its type so the server never has to guess it.
    private mutating func bind(_ value: PostgresValue) -> String {
        arguments.append(value)
        let cast: String
        switch value {
        case .integer: cast = "::bigint"
        case .double: cast = "::float8"
        case .bytes: cast = "::bytea"
        case .bool: cast = "::boolean"
        case .text, .null: cast = "::text"
        }
        return "$\(arguments.count)\(cast)"
    }

    private static func value(_ key: QueryCursor.Key) -> PostgresValue {
        switch key {
        case .null: .null
        case .integer(let n): .integer(n)
        case .real(let d): .double(d)
        case .text(let t): .text(t)
        case .bytes(let b): .bytes(b)
        }
    }

    /// A filter's operand as bound: strings escaped as `field_index` holds them (P50).
    static func value(_ value: FieldValue) -> PostgresValue? {
        switch value {
        case .string(let s): .text(IndexedText.escape(s))
        case .int64(let i), .timestamp(let i): .integer(i)
        case .double(let d): .double(d)
        case .bytes(let b): .bytes(b)
        case .reference(let r): .text(IndexedText.escape(r.recordName))
        case .location, .asset, .list: nil
        }
    }

    /// `column IN (…)` over `values`, padded to the next power of two; `FALSE` for none.
    private mutating func membership(_ column: String, _ values: [PostgresValue], cast: String) -> String {
        guard let last = values.last else { return "FALSE" }
        var width = 1
        while width < values.count { width *= 2 }
        let padded = values + Array(repeating: last, count: width - values.count)
        return "\(column) IN (\(padded.map { bind($0) }.joined(separator: ", ")))"
    }

    private mutating func inZones(_ column: String) -> String {
        if zoneKeys.count == 1 { return "\(column) = \(bind(.integer(zoneKeys[0])))" }
        return membership(column, zoneKeys.map(PostgresValue.integer), cast: "bigint")
    }

    // MARK: Cursors

    /// "Strictly after `cursor`" in `order`, then `r.id` ascending: the first key that differs
    /// decides. NULL sorts first ascending and last descending (the ORDER BY says so), written
    /// out by whether the cursor's key is NULL: at most two shapes per key.
    private mutating func after(_ cursor: QueryCursor, order: [OrderTerm]) -> String {
        var alternatives: [String] = []
        var equal: [String] = []
        for (index, term) in order.enumerated() {
            let k = term.expression
            let later: String
            switch (cursor.keys[index], term.ascending) {
            case (.null, true): later = "\(k) IS NOT NULL"
            case (.null, false): later = "FALSE"
            case (let key, true): later = "\(k) > \(bind(Self.value(key)))"
            case (let key, false): later = "(\(k) < \(bind(Self.value(key))) OR \(k) IS NULL)"
            }
            alternatives.append("(" + (equal + [later]).joined(separator: " AND ") + ")")
            if case .null = cursor.keys[index] {
                equal.append("\(k) IS NULL")
            } else {
                equal.append("\(k) = \(bind(Self.value(cursor.keys[index])))")
            }
        }
        alternatives.append("(" + (equal + ["r.id > \(bind(.integer(cursor.recordKey)))"]).joined(separator: " AND ") + ")")
        return "(" + alternatives.joined(separator: " OR ") + ")"
    }

    // MARK: Filters

    private mutating func condition(for filter: Filter, recordType: String) throws(CloudKitError) -> String {
        switch filter.field {
        case .system(let field): return try systemCondition(filter, field: field)
        case .user(let name): return try userCondition(filter, field: name, recordType: recordType)
        }
    }

    static func column(for field: SystemField) -> (name: String, numeric: Bool) {
        switch field {
        case .recordName: ("r.name", false)
        case .share: ("r.share", false)
        case .parent: ("r.parent", false)
        case .createdUserRecordName: ("r.created_by", false)
        case .modifiedUserRecordName: ("r.modified_by", false)
        case .createdTimestamp: ("r.created_at", true)
        case .modifiedTimestamp: ("r.modified_at", true)
        }
    }

    /// SQLite's order of type classes: NULL, numbers, text, blobs.
    private static func typeClass(_ value: PostgresValue) -> Int {
        switch value {
        case .null: 0
        case .integer, .double, .bool: 1
        case .text: 2
        case .bytes: 3
        }
    }

    private mutating func systemCondition(_ filter: Filter, field: SystemField) throws(CloudKitError) -> String {
        let (column, numeric) = Self.column(for: field)
        let columnClass = numeric ? 1 : 2
        let scalar: PostgresValue? = filter.value.elements.count == 1 ? Self.value(filter.value.elements[0]) : nil
        switch filter.comparator {
        case .equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard let scalar, !filter.value.type.isList else { throw invalid(filter, "needs a single value") }
            let op = Self.sqlOperator(filter.comparator)
            // A value of another type class compares by class, as in SQLite (a column value is
            // never NULL here but for share and parent, which then match nothing).
            guard Self.typeClass(scalar) == columnClass else {
                let holds = Self.compare(columnClass, Self.typeClass(scalar), filter.comparator)
                return holds ? "\(column) IS NOT NULL" : "FALSE"
            }
            return "\(column) \(op) \(bind(scalar))"
        case .in, .notIn:
            let values = filter.value.elements.compactMap(Self.value).filter { Self.typeClass($0) == columnClass }
            let list = membership(column, values, cast: numeric ? "bigint" : "text")
            return filter.comparator == .in ? list : "\(column) IS NOT NULL AND NOT (\(list))"
        case .beginsWith, .notBeginsWith:
            guard case .text(let prefix)? = scalar else { throw invalid(filter, "needs a STRING value") }
            guard !numeric else { return filter.comparator == .beginsWith ? "FALSE" : "TRUE" }
            let positive = "(\(column) >= \(bind(.text(prefix))) AND \(column) < \(bind(.text(prefix + "\u{10FFFF}"))))"
            return filter.comparator == .beginsWith ? positive : "NOT \(positive)"
        default:
            throw invalid(filter, "is not supported on system field \(filter.field)")
        }
    }

    private static func compare(_ left: Int, _ right: Int, _ comparator: Comparator) -> Bool {
        switch comparator {
        case .equals: left == right
        case .notEquals: left != right
        case .lessThan: left < right
        case .lessThanOrEquals: left <= right
        case .greaterThan: left > right
        case .greaterThanOrEquals: left >= right
        default: false
        }
    }

    /// `SELECT f.record_id FROM field_index f WHERE` (this field's index rows in `slots`).
    private mutating func select(_ recordType: String, _ field: String, _ slots: [Int64]) -> String {
        let zones = inZones("f.zone_id")
        let type = bind(.text(recordType)), name = bind(.text(field))
        let slot = slots.count == 1 ? "f.slot = \(bind(.integer(slots[0])))"
            : "f.slot IN (" + slots.map { bind(.integer($0)) }.joined(separator: ", ") + ")"
        return """
            SELECT f.record_id FROM field_index f WHERE \(zones) AND f.type = \(type) \
            AND f.field = \(name) AND \(slot)
            """
    }

    /// `f`'s value compared with `value` by `op`, on the column of the value's type (numbers
    /// on both numeric columns, as SQLite compares integers and reals).
    private mutating func compareValue(_ op: String, _ value: PostgresValue) -> String {
        switch value {
        case .integer, .double, .bool:
            let parameter = bind(value)
            return "(f.value_integer \(op) \(parameter) OR f.value_real \(op) \(parameter))"
        case .text: return "f.value_text \(op) \(bind(value))"
        case .bytes: return "f.value_bytes \(op) \(bind(value))"
        case .null: return "FALSE"
        }
    }

    /// `f`'s value is one of `values`.
    private mutating func valueIn(_ values: [PostgresValue]) -> String {
        let integers = values.filter { if case .integer = $0 { true } else { false } }
        let reals = values.filter { if case .double = $0 { true } else { false } }
        let texts = values.filter { if case .text = $0 { true } else { false } }
        let bytes = values.filter { if case .bytes = $0 { true } else { false } }
        var terms: [String] = []
        if !integers.isEmpty || !reals.isEmpty {
            let numbers = integers + reals
            terms.append(membership("f.value_integer", numbers, cast: ""))
            terms.append(membership("f.value_real", numbers, cast: ""))
        }
        if !texts.isEmpty { terms.append(membership("f.value_text", texts, cast: "text")) }
        if !bytes.isEmpty { terms.append(membership("f.value_bytes", bytes, cast: "bytea")) }
        return terms.isEmpty ? "FALSE" : "(" + terms.joined(separator: " OR ") + ")"
    }

    private mutating func userCondition(_ filter: Filter, field: String, recordType: String) throws(CloudKitError) -> String {
        let elements = filter.value.elements
        let values = elements.compactMap(Self.value)
        let slot = FieldIndexer.valueSlot
        if filter.comparator != .near && values.count != elements.count {
            throw invalid(filter, "cannot compare LOCATION or ASSET values (use NEAR for locations)")
        }
        if filter.comparator == .listContainsAll || filter.comparator == .notListContainsAll {
            try countAllOfTerms(values.count, filter)
        }
        func presence(_ planner: inout Self) -> String { "r.id IN (\(planner.select(recordType, field, FieldIndexer.presenceSlots)))" }
        func matching(_ planner: inout Self, _ condition: (inout Self) -> String) -> String {
            let rows = planner.select(recordType, field, [slot])
            return "r.id IN (\(rows) AND \(condition(&planner)))"
        }
        /// Records with the field whose values do not meet `condition`.
        func havingNot(_ planner: inout Self, _ condition: (inout Self) -> String) -> String {
            let have = presence(&planner)
            let rows = planner.select(recordType, field, [slot])
            return "\(have) AND r.id NOT IN (\(rows) AND \(condition(&planner)))"
        }

        switch filter.comparator {
        case .equals, .listContains:
            guard values.count == 1, !filter.value.type.isList else { throw invalid(filter, "needs a single value") }
            return matching(&self) { $0.compareValue("=", values[0]) }
        case .notEquals, .notListContains:
            guard values.count == 1, !filter.value.type.isList else { throw invalid(filter, "needs a single value") }
            return havingNot(&self) { $0.compareValue("=", values[0]) }
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard values.count == 1, Self.typeClass(values[0]) == 1 || Self.typeClass(values[0]) == 2 else {
                throw invalid(filter, "needs one STRING, INT64, DOUBLE or TIMESTAMP value")
            }
            let op = Self.sqlOperator(filter.comparator)
            return matching(&self) { $0.compareValue(op, values[0]) }
        case .in:
            guard !values.isEmpty else { return "FALSE" }
            return matching(&self) { $0.valueIn(values) }
        case .notIn, .notListContainsAny:
            guard !values.isEmpty else { return presence(&self) }
            return havingNot(&self) { $0.valueIn(values) }
        case .listContainsAll:
            // Bounded by Limits.valuesPerAllFilter: at most that many subqueries per query.
            guard !values.isEmpty else { return presence(&self) }
            return values.map { value in matching(&self) { $0.compareValue("=", value) } }.joined(separator: " AND ")
        case .notListContainsAll:
            // Every list contains all of nothing, so no record is left.
            guard !values.isEmpty else { return "FALSE" }
            let have = presence(&self)
            let all = values.map { value in matching(&self) { $0.compareValue("=", value) } }.joined(separator: " AND ")
            return "\(have) AND NOT (\(all))"
        case .beginsWith, .listMemberBeginsWith, .notBeginsWith, .notListMemberBeginsWith:
            guard values.count == 1, case .text(let prefix) = values[0] else { throw invalid(filter, "needs a STRING value") }
            let range: (inout Self) -> String = {
                "f.value_text >= \($0.bind(.text(prefix))) AND f.value_text < \($0.bind(.text(prefix + "\u{10FFFF}")))"
            }
            if filter.comparator == .beginsWith || filter.comparator == .listMemberBeginsWith {
                return matching(&self, range)
            }
            return havingNot(&self, range)
        case .containsAllTokens, .containsAnyTokens:
            // The operand as the client sent it: `values` holds P50's escaped form, without NUL.
            guard values.count == 1, case .text = values[0], case .string(let text)? = elements.first else {
                throw invalid(filter, "needs a STRING value")
            }
            let tokens = try FieldIndexer.searchTokens(of: text)
            guard !tokens.isEmpty else { return "FALSE" }
            if filter.comparator == .containsAllTokens { try countAllOfTerms(tokens.count, filter) }
            // Tokens are letters and digits only; quoted, no token is tsquery syntax, and the
            // cast (unlike to_tsquery) keeps each whole, as array_to_tsvector stored them (P17).
            let terms = tokens.map { "'" + FieldIndexer.searchTerm($0, field: field) + "'" }
            let query = terms.joined(separator: filter.comparator == .containsAllTokens ? " & " : " | ")
            return "r.id IN (SELECT s.record_id FROM field_search s WHERE s.body @@ \(bind(.text(query)))::tsquery)"
        case .near:
            guard case .location(let center) = filter.value, let distance = filter.distance else {
                throw invalid(filter, "needs a LOCATION value and a distance")
            }
            let latitudeSpan = distance / 111_000 + 0.01
            let zones = inZones("f.zone_id")
            let head = """
                SELECT f.record_id FROM field_index f JOIN field_index g ON g.record_id = f.record_id \
                AND g.field = f.field AND g.slot = \(FieldIndexer.longitudeSlot) WHERE \(zones) \
                AND f.type = \(bind(.text(recordType))) AND f.field = \(bind(.text(field))) AND f.slot = \(bind(.integer(slot))) \
                AND f.value_real BETWEEN \(bind(.double(center.latitude - latitudeSpan))) AND \(bind(.double(center.latitude + latitudeSpan)))
                """
            let metres = distanceSQL(latitude: "f.value_real", longitude: "g.value_real", from: center)
            return "r.id IN (\(head) AND \(metres) <= \(bind(.double(distance))))"
        }
    }

    private mutating func countAllOfTerms(_ count: Int, _ filter: Filter) throws(CloudKitError) {
        allOfTerms += count
        guard allOfTerms <= Limits.valuesPerAllFilter else {
            throw CloudKitError(.limitExceeded, "a query may hold at most \(Limits.valuesPerAllFilter) values across its LIST_CONTAINS_ALL, NOT_LIST_CONTAINS_ALL and CONTAINS_ALL_TOKENS filters (\(filter.comparator.rawValue) on '\(filter.field)' brings it to \(allOfTerms))")
        }
    }

    // MARK: Sorts

    /// The order expressions of one sort: a system column; a distance from a location; or a
    /// user field's smallest value by type class (bytes, text, number, integer: with NULLs
    /// first, a record whose value is of a later class sorts after every earlier class).
    private mutating func orderTerms(for sort: Sort) throws(CloudKitError) -> [String] {
        switch sort.field {
        case .system(let field):
            return [Self.column(for: field).name]
        case .user(let name):
            guard Names.isValidFieldName(name) else { throw .badRequest("invalid sort field '\(name)'") }
            func smallest(_ planner: inout Self, _ value: String, slot: Int64 = FieldIndexer.valueSlot) -> String {
                // ORDER BY … LIMIT 1 rather than min(): bytea has no min().
                """
                (SELECT \(value) FROM field_index s WHERE s.record_id = r.id AND s.field = \(planner.bind(.text(name))) \
                AND s.slot = \(planner.bind(.integer(slot))) AND \(value) IS NOT NULL ORDER BY 1 LIMIT 1)
                """
            }
            if let center = sort.relativeLocation {
                let latitude = smallest(&self, "s.value_real")
                let longitude = smallest(&self, "s.value_real", slot: FieldIndexer.longitudeSlot)
                return [distanceSQL(latitude: latitude, longitude: longitude, from: center)]
            }
            return [smallest(&self, "s.value_bytes"), smallest(&self, "s.value_text"),
                    smallest(&self, "coalesce(s.value_real, s.value_integer::float8)"), smallest(&self, "s.value_integer")]
        }
    }

    // MARK: Helpers

    /// Haversine distance in metres, with the centre bound as parameters.
    private mutating func distanceSQL(latitude: String, longitude: String, from center: Location) -> String {
        let lat = bind(.double(center.latitude)), lon = bind(.double(center.longitude))
        return """
            (12742017.6 * asin(least(1, sqrt(power(sin(radians(\(latitude) - \(lat)) / 2), 2) + cos(radians(\(lat))) \
            * cos(radians(\(latitude))) * power(sin(radians(\(longitude) - \(lon)) / 2), 2)))))
            """
    }

    static func sqlOperator(_ comparator: Comparator) -> String {
        switch comparator {
        case .equals: "="
        case .notEquals: "<>"
        case .lessThan: "<"
        case .lessThanOrEquals: "<="
        case .greaterThan: ">"
        case .greaterThanOrEquals: ">="
        default: "="
        }
    }

    private func invalid(_ filter: Filter, _ problem: String) -> CloudKitError {
        .badRequest("\(filter.comparator.rawValue) on '\(filter.field)' \(problem)")
    }
}
