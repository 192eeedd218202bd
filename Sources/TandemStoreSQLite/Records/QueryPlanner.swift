import TandemCore
import TandemSQLite
import TandemStore

/// Translates a `Query` into SQL over `records` and `field_index`.
///
/// In one zone without sorts, the first equality filter drives the query from the index in record
/// order. Every other filter on a user field becomes `r.id IN (SELECT record_id FROM field_index ...)`, which
/// SQLite answers from `field_index_lookup` (zone, type, field, slot, value): a query never
/// scans a whole zone to find matches. Negated comparators select records that have the field
/// and do not meet the positive condition. Range comparators are bounded to the value's type
/// class (numbers sort before text in SQLite), so `> 5` never matches a string.
struct QueryPlanner {
    var sql = ""
    var arguments: [SQLiteValue] = []
    /// Sort key expressions selected after the record columns, `r.zone_id` and `r.id`: what a
    /// ``QueryCursor`` holds.
    private(set) var keyCount = 0
    /// Terms of all-of comparators so far: each becomes its own subquery, and SQLite's expression
    /// depth (1,000) bounds them across the whole query.
    private var allOfTerms = 0
    private let zoneKeys: [Int64]

    /// `memberships` limits the records to those of these shares (a participant's view).
    /// `orderedFields` are the fields with an expression index (`SortIndexes`): sorts on them
    /// walk that index instead of looking each record's value up. `after` continues a query
    /// after the record a cursor names.
    ///
    /// Nothing a client sends is written into the SQL text: values, value lists, zone keys,
    /// field names and locations are bound as parameters (issue 14), so the statements a
    /// client can make the server prepare are bounded by the query's shape (filters,
    /// comparators and sorts, themselves limited), not by its data.
    ///
    /// - Throws: `BAD_REQUEST` for a cursor that does not fit the query's order.
    init(query: Query, zoneKeys: [Int64], limit: Int, after cursor: QueryCursor? = nil, memberships: [String]? = nil,
         orderedFields: Set<String> = []) throws(CloudKitError) {
        guard query.filters.count <= Limits.filtersPerQuery else {
            throw CloudKitError(.limitExceeded, "a query takes at most \(Limits.filtersPerQuery) filters; got \(query.filters.count)")
        }
        guard query.sorts.count <= Limits.sortsPerQuery else {
            throw CloudKitError(.limitExceeded, "a query takes at most \(Limits.sortsPerQuery) sort descriptors; got \(query.sorts.count)")
        }
        self.zoneKeys = zoneKeys.isEmpty ? [-1] : zoneKeys
        var filters = query.filters
        var from = "records r"
        var conditions: [String] = []
        /// Order terms: expression, direction; the last is the record key, ascending.
        var order: [OrderTerm] = []
        var recordKey = "r.id"
        // In one zone with no sort, an equality filter drives the query: the index delivers the
        // matching rows already in record order, so SQLite stops after `limit` rows instead of
        // fetching and sorting every match.
        if self.zoneKeys.count == 1, query.sorts.isEmpty, let index = filters.firstIndex(where: Self.canDrive) {
            let driver = filters.remove(at: index)
            guard case .user(let field) = driver.field, let value = driver.value.elements.first.flatMap(Self.sqlValue) else {
                throw .badRequest("\(driver.comparator.rawValue) on '\(driver.field)' needs a single value")
            }
            from = "field_index d JOIN records r ON r.id = d.record_id"
            conditions = ["d.zone_id = ?", "d.type = ?", "d.field = ?", "d.slot = \(FieldIndexer.valueSlot)", "d.value = ?"]
            arguments += [.integer(self.zoneKeys[0]), .text(query.recordType), .text(field), value]
            recordKey = "d.record_id"
        } else {
            conditions = [inZones("r.zone_id"), "r.type = ?"]
            arguments.append(.text(query.recordType))
        }
        for filter in filters {
            conditions.append(try condition(for: filter, recordType: query.recordType))
        }
        if let memberships, !memberships.isEmpty {
            conditions.append("r.membership IN (SELECT value FROM json_each(?))")
            arguments.append(BoundValueList.jsonText(memberships))
        }
        if recordKey == "r.id" {
            for sort in query.sorts {
                if case .user(let name) = sort.field, sort.relativeLocation == nil, orderedFields.contains(name) {
                    // The index expression must match the index's text; the name comes from the schema.
                    order.append(OrderTerm(expression: SortIndexes.expression(name, table: "r"), ascending: sort.ascending, arguments: []))
                    // The index is partial on the type; a literal lets SQLite see that it applies.
                    conditions.append("r.type = \(SortIndexes.literal(query.recordType))")
                    continue
                }
                let term = try orderTerm(for: sort)
                order.append(OrderTerm(expression: term.sql, ascending: sort.ascending, arguments: term.arguments))
            }
        }
        keyCount = order.count
        var keyArguments: [SQLiteValue] = []
        if let cursor {
            guard cursor.keys.count == order.count else {
                throw .badRequest("continuationMarker does not fit this query's sort order")
            }
            let after = Self.after(cursor, order: order, recordKey: recordKey)
            conditions.append(after.sql)
            keyArguments = after.arguments
        }
        let keys = order.map(\.expression)
        let orderBy = order.map { $0.expression + ($0.ascending ? " ASC" : " DESC") } + [recordKey + " ASC"]
        sql = """
            SELECT \(RecordRows.recordColumns), r.zone_id, r.id\(keys.map { ", " + $0 }.joined()) FROM \(from)
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(orderBy.joined(separator: ", ")) LIMIT ?
            """
        // Placeholders in text order: select list, WHERE (filters, then the cursor), ORDER BY, LIMIT.
        let orderArguments = order.flatMap(\.arguments)
        arguments = orderArguments + arguments + keyArguments + orderArguments + [.integer(Int64(limit))]
    }

    /// The condition "strictly after `cursor`" in the order `order`, then `recordKey` ascending:
    /// the first key that differs decides. SQLite orders NULL first ascending and last
    /// descending; the NULL cases are written with parameters, so the text does not depend on
    /// the cursor's values, except for a range on the first key (when it is not NULL) that lets
    /// SQLite seek an index to the cursor instead of walking up to it.
    static func after(_ cursor: QueryCursor, order: [OrderTerm], recordKey: String) -> (sql: String, arguments: [SQLiteValue]) {
        // An order expression may hold parameters of its own (a sort field's name): they are
        // repeated wherever the expression is written.
        let perExpression = order.map(\.arguments)
        var sql: [String] = []
        var arguments: [SQLiteValue] = []
        var equalSQL: [String] = []
        var equalArguments: [SQLiteValue] = []
        for (index, term) in order.enumerated() {
            let k = term.expression, own = perExpression[index], v = Self.sqlValue(cursor.keys[index])
            let later = term.ascending ? "(\(k) > ? OR (? IS NULL AND \(k) IS NOT NULL))" : "(\(k) < ? OR (\(k) IS NULL AND ? IS NOT NULL))"
            let laterArguments = term.ascending ? own + [v, v] + own : own + [v] + own + [v]
            sql.append("(" + (equalSQL + [later]).joined(separator: " AND ") + ")")
            arguments += equalArguments + laterArguments
            equalSQL.append("\(k) IS ?")
            equalArguments += own + [v]
        }
        sql.append("(" + (equalSQL + ["\(recordKey) > ?"]).joined(separator: " AND ") + ")")
        arguments += equalArguments + [.integer(cursor.recordKey)]
        var condition = "(" + sql.joined(separator: " OR ") + ")"
        if let first = order.first, cursor.keys[0] != .null {
            let v = Self.sqlValue(cursor.keys[0])
            condition = first.ascending ? "\(first.expression) >= ? AND " + condition : "(\(first.expression) <= ? OR \(first.expression) IS NULL) AND " + condition
            arguments = perExpression[0] + [v] + (first.ascending ? [] : perExpression[0]) + arguments
        } else if order.isEmpty {
            condition = "\(recordKey) > ?"
            arguments = [.integer(cursor.recordKey)]
        }
        return (condition, arguments)
    }

    static func sqlValue(_ key: QueryCursor.Key) -> SQLiteValue {
        switch key {
        case .null: .null
        case .integer(let n): .integer(n)
        case .real(let d): .real(d)
        case .text(let t): .text(t)
        case .bytes(let b): .blob(b)
        }
    }

    /// The cursor of a row the query returned (its columns after the record's 12, `r.zone_id`).
    static func cursor(_ row: SQLiteStatement, keyCount: Int) -> QueryCursor {
        let keys: [QueryCursor.Key] = (0..<keyCount).map { index in
            let column = Int32(14 + index)
            switch row.value(column) {
            case .null: return .null
            case .integer(let n): return .integer(n)
            case .real(let d): return .real(d)
            case .text(let t): return .text(t)
            case .blob(let b): return .bytes(b)
            }
        }
        return QueryCursor(keys: keys, recordKey: row.int64(13))
    }

    /// One ORDER BY expression with the arguments of its own placeholders.
    struct OrderTerm {
        var expression: String
        var ascending: Bool
        var arguments: [SQLiteValue]
    }

    /// `column` in the query's zones, with its argument appended.
    private mutating func inZones(_ column: String) -> String {
        if zoneKeys.count == 1 {
            arguments.append(.integer(zoneKeys[0]))
            return "\(column) = ?"
        }
        arguments.append(.text(JSONWriter.string(.array(zoneKeys.map(JSONValue.int)))))
        return "\(column) IN (SELECT value FROM json_each(?))"
    }

    /// A filter that selects by one exact indexed value (at most one index row per record).
    static func canDrive(_ filter: Filter) -> Bool {
        guard case .user = filter.field, filter.comparator == .equals || filter.comparator == .listContains,
              !filter.value.type.isList, let value = filter.value.elements.first else { return false }
        return sqlValue(value) != nil
    }

    // MARK: Filters

    private mutating func condition(for filter: Filter, recordType: String) throws(CloudKitError) -> String {
        switch filter.field {
        case .system(let field): return try systemCondition(filter, column: Self.column(for: field))
        case .user(let name): return try userCondition(filter, field: name, recordType: recordType)
        }
    }

    static func column(for field: SystemField) -> String {
        switch field {
        case .recordName: "r.name"
        case .share: "r.share"
        case .parent: "r.parent"
        case .createdUserRecordName: "r.created_by"
        case .modifiedUserRecordName: "r.modified_by"
        case .createdTimestamp: "r.created_at"
        case .modifiedTimestamp: "r.modified_at"
        }
    }

    private mutating func systemCondition(_ filter: Filter, column: String) throws(CloudKitError) -> String {
        let scalar: SQLiteValue? = filter.value.elements.count == 1 ? Self.sqlValue(filter.value.elements[0]) : nil
        switch filter.comparator {
        case .equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard let scalar, !filter.value.type.isList else { throw invalid(filter, "needs a single value") }
            arguments.append(scalar)
            return "\(column) \(Self.sqlOperator(filter.comparator)) ?"
        case .in, .notIn:
            let list = BoundValueList.membership(column, filter.value.elements.compactMap(Self.sqlValue))
            arguments.append(contentsOf: list.arguments)
            return filter.comparator == .in ? list.sql : "NOT (\(list.sql))"
        case .beginsWith, .notBeginsWith:
            guard case .text(let prefix)? = scalar else { throw invalid(filter, "needs a STRING value") }
            arguments.append(contentsOf: [.text(prefix), .text(prefix + "\u{10FFFF}")])
            let positive = "(\(column) >= ? AND \(column) < ?)"
            return filter.comparator == .beginsWith ? positive : "NOT \(positive)"
        default:
            throw invalid(filter, "is not supported on system field \(filter.field)")
        }
    }

    /// `SELECT f.record_id FROM field_index f WHERE` (this field's index rows in `slots`), with its arguments appended.
    private mutating func select(_ recordType: String, _ field: String, _ slots: [Int64]) -> String {
        let zones = inZones("f.zone_id")
        arguments.append(contentsOf: [.text(recordType), .text(field)] + slots.map { .integer($0) })
        let slot = slots.count == 1 ? "f.slot = ?" : "f.slot IN (" + slots.map { _ in "?" }.joined(separator: ", ") + ")"
        return "SELECT f.record_id FROM field_index f WHERE \(zones) AND f.type = ? AND f.field = ? AND \(slot)"
    }

    private mutating func userCondition(_ filter: Filter, field: String, recordType: String) throws(CloudKitError) -> String {
        func subquery(_ slot: Int64, _ valueCondition: String, _ values: [SQLiteValue]) -> String {
            let rows = select(recordType, field, [slot])
            arguments.append(contentsOf: values)
            return "r.id IN (\(rows) AND \(valueCondition))"
        }
        func presence() -> String { "r.id IN (\(select(recordType, field, FieldIndexer.presenceSlots)))" }
        /// Records with the field whose values do not meet `valueCondition`.
        func havingNot(_ valueCondition: String, _ values: [SQLiteValue]) -> String {
            let have = presence()
            let rows = select(recordType, field, [FieldIndexer.valueSlot])
            arguments.append(contentsOf: values)
            return "\(have) AND r.id NOT IN (\(rows) AND \(valueCondition))"
        }
        let elements = filter.value.elements
        let values = elements.compactMap(Self.sqlValue)
        let slot = FieldIndexer.valueSlot
        if filter.comparator != .near && values.count != elements.count {
            throw invalid(filter, "cannot compare LOCATION or ASSET values (use NEAR for locations)")
        }
        if filter.comparator == .listContainsAll || filter.comparator == .notListContainsAll {
            try countAllOfTerms(values.count, filter)
        }

        switch filter.comparator {
        case .equals, .listContains:
            guard values.count == 1, !filter.value.type.isList else { throw invalid(filter, "needs a single value") }
            return subquery(slot, "f.value = ?", values)
        case .notEquals, .notListContains:
            guard values.count == 1, !filter.value.type.isList else { throw invalid(filter, "needs a single value") }
            return havingNot("f.value = ?", values)
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard values.count == 1, let bound = Self.typeClassBound(values[0]) else {
                throw invalid(filter, "needs one STRING, INT64, DOUBLE or TIMESTAMP value")
            }
            return subquery(slot, "f.value \(Self.sqlOperator(filter.comparator)) ? AND \(bound)", values)
        case .in:
            guard !values.isEmpty else { return "0" }
            let list = BoundValueList.membership("f.value", values)
            return subquery(slot, list.sql, list.arguments)
        case .notIn, .notListContainsAny:
            guard !values.isEmpty else { return presence() }
            let list = BoundValueList.membership("f.value", values)
            return havingNot(list.sql, list.arguments)
        case .listContainsAll:
            // Bounded by Limits.valuesPerAllFilter: at most that many subqueries per query.
            guard !values.isEmpty else { return presence() }
            return values.map { subquery(slot, "f.value = ?", [$0]) }.joined(separator: " AND ")
        case .notListContainsAll:
            // Every list contains all of nothing, so no record is left.
            guard !values.isEmpty else { return "0" }
            let have = presence()
            let all = values.map { subquery(slot, "f.value = ?", [$0]) }.joined(separator: " AND ")
            return "\(have) AND NOT (\(all))"
        case .beginsWith, .listMemberBeginsWith, .notBeginsWith, .notListMemberBeginsWith:
            guard values.count == 1, case .text(let prefix) = values[0] else { throw invalid(filter, "needs a STRING value") }
            let range = "f.value >= ? AND f.value < ?"
            let bounds: [SQLiteValue] = [.text(prefix), .text(prefix + "\u{10FFFF}")]
            if filter.comparator == .beginsWith || filter.comparator == .listMemberBeginsWith {
                return subquery(slot, range, bounds)
            }
            return havingNot(range, bounds)
        case .containsAllTokens, .containsAnyTokens:
            guard values.count == 1, case .text(let text) = values[0] else { throw invalid(filter, "needs a STRING value") }
            let tokens = try FieldIndexer.searchTokens(of: text)
            guard !tokens.isEmpty else { return "0" }
            if filter.comparator == .containsAllTokens { try countAllOfTerms(tokens.count, filter) }
            // The full-text index of SEARCHABLE fields; terms are quoted, so no token is FTS5 syntax.
            let terms = tokens.map { "\"" + FieldIndexer.searchTerm($0, field: field) + "\"" }
            arguments.append(.text(terms.joined(separator: filter.comparator == .containsAllTokens ? " AND " : " OR ")))
            return "r.id IN (SELECT rowid FROM field_search WHERE field_search MATCH ?)"
        case .near:
            guard case .location(let center) = filter.value, let distance = filter.distance else {
                throw invalid(filter, "needs a LOCATION value and a distance")
            }
            let latitudeSpan = distance / 111_000 + 0.01
            let zones = inZones("f.zone_id")
            arguments.append(contentsOf: [.text(recordType), .text(field), .integer(slot),
                                          .real(center.latitude - latitudeSpan), .real(center.latitude + latitudeSpan)])
            let distanceSQL = Self.distanceSQL(latitude: ("f.value", []), longitude: ("g.value", []), from: center)
            arguments.append(contentsOf: distanceSQL.arguments)
            arguments.append(.real(distance))
            return """
                r.id IN (SELECT f.record_id FROM field_index f JOIN field_index g ON g.record_id = f.record_id \
                AND g.field = f.field AND g.slot = \(FieldIndexer.longitudeSlot) WHERE \(zones) \
                AND f.type = ? AND f.field = ? AND f.slot = ? AND f.value BETWEEN ? AND ? AND \(distanceSQL.sql) <= ?)
                """
        }
    }

    private mutating func countAllOfTerms(_ count: Int, _ filter: Filter) throws(CloudKitError) {
        allOfTerms += count
        guard allOfTerms <= Limits.valuesPerAllFilter else {
            throw CloudKitError(.limitExceeded, "a query may hold at most \(Limits.valuesPerAllFilter) values across its LIST_CONTAINS_ALL, NOT_LIST_CONTAINS_ALL and CONTAINS_ALL_TOKENS filters (\(filter.comparator.rawValue) on '\(filter.field)' brings it to \(allOfTerms))")
        }
    }

    // MARK: Sorts

    private func orderTerm(for sort: Sort) throws(CloudKitError) -> (sql: String, arguments: [SQLiteValue]) {
        switch sort.field {
        case .system(let field):
            return (Self.column(for: field), [])
        case .user(let name):
            guard Names.isValidFieldName(name) else { throw .badRequest("invalid sort field '\(name)'") }
            let first = ("(SELECT min(s.value) FROM field_index s WHERE s.record_id = r.id AND s.field = ? AND s.slot = 0)", [SQLiteValue.text(name)])
            guard let center = sort.relativeLocation else { return first }
            let longitude = ("(SELECT min(s.value) FROM field_index s WHERE s.record_id = r.id AND s.field = ? AND s.slot = \(FieldIndexer.longitudeSlot))",
                             [SQLiteValue.text(name)])
            return Self.distanceSQL(latitude: first, longitude: longitude, from: center)
        }
    }

    // MARK: Helpers

    /// Haversine distance in metres, in SQL (SQLite's math functions), with the centre bound as
    /// parameters; the arguments follow the placeholders' order in the text.
    static func distanceSQL(latitude: (sql: String, arguments: [SQLiteValue]), longitude: (sql: String, arguments: [SQLiteValue]),
                            from center: Location) -> (sql: String, arguments: [SQLiteValue]) {
        let lat = SQLiteValue.real(center.latitude), lon = SQLiteValue.real(center.longitude)
        let sql = """
            (12742017.6 * asin(min(1, sqrt(pow(sin(radians(\(latitude.sql) - ?) / 2), 2) + cos(radians(?)) \
            * cos(radians(\(latitude.sql))) * pow(sin(radians(\(longitude.sql) - ?) / 2), 2)))))
            """
        return (sql, latitude.arguments + [lat, lat] + latitude.arguments + longitude.arguments + [lon])
    }

    static func placeholders(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ",") }

    static func sqlOperator(_ comparator: Comparator) -> String {
        switch comparator {
        case .equals: "="
        case .notEquals: "!="
        case .lessThan: "<"
        case .lessThanOrEquals: "<="
        case .greaterThan: ">"
        case .greaterThanOrEquals: ">="
        default: "="
        }
    }

    /// A condition keeping `f.value` in the same SQLite type class as `value`.
    static func typeClassBound(_ value: SQLiteValue) -> String? {
        switch value {
        case .integer, .real: "f.value < ''"
        case .text: "f.value >= '' AND f.value < X''"
        default: nil
        }
    }

    static func sqlValue(_ value: FieldValue) -> SQLiteValue? {
        switch value {
        case .string(let s): .text(s)
        case .int64(let i), .timestamp(let i): .integer(i)
        case .double(let d): .real(d)
        case .bytes(let b): .blob(b)
        case .reference(let r): .text(r.recordName)
        case .location, .asset, .list: nil
        }
    }

    private func invalid(_ filter: Filter, _ problem: String) -> CloudKitError {
        .badRequest("\(filter.comparator.rawValue) on '\(filter.field)' \(problem)")
    }
}
