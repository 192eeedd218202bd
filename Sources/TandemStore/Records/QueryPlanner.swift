import TandemCore
import TandemSQLite

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
    /// Terms of all-of comparators so far: each becomes its own subquery, and SQLite's expression
    /// depth (1,000) bounds them across the whole query.
    private var allOfTerms = 0

    /// `memberships` limits the records to those of these shares (a participant's view).
    /// `orderedFields` are the fields with an expression index (`SortIndexes`): sorts on them
    /// walk that index instead of looking each record's value up.
    init(query: Query, zoneKeys: [Int64], limit: Int, offset: Int, memberships: [String]? = nil,
         orderedFields: Set<String> = []) throws(CloudKitError) {
        guard query.filters.count <= Limits.filtersPerQuery else {
            throw CloudKitError(.limitExceeded, "a query takes at most \(Limits.filtersPerQuery) filters; got \(query.filters.count)")
        }
        guard query.sorts.count <= Limits.sortsPerQuery else {
            throw CloudKitError(.limitExceeded, "a query takes at most \(Limits.sortsPerQuery) sort descriptors; got \(query.sorts.count)")
        }
        let zoneList = zoneKeys.map(String.init).joined(separator: ",")
        var filters = query.filters
        var from = "records r"
        var conditions: [String] = []
        var order: [String] = []
        // In one zone with no sort, an equality filter drives the query: the index delivers the
        // matching rows already in record order, so SQLite stops after `limit` rows instead of
        // fetching and sorting every match.
        if zoneKeys.count == 1, query.sorts.isEmpty, let index = filters.firstIndex(where: Self.canDrive) {
            let driver = filters.remove(at: index)
            guard case .user(let field) = driver.field, let value = driver.value.elements.first.flatMap(Self.sqlValue) else {
                throw .badRequest("\(driver.comparator.rawValue) on '\(driver.field)' needs a single value")
            }
            from = "field_index d JOIN records r ON r.id = d.record_id"
            conditions = ["d.zone_id = \(zoneList)", "d.type = ?", "d.field = ?", "d.slot = \(FieldIndexer.valueSlot)", "d.value = ?"]
            arguments += [.text(query.recordType), .text(field), value]
            order = ["d.record_id ASC"]
        } else {
            conditions = ["r.zone_id IN (\(zoneList))", "r.type = ?"]
            arguments.append(.text(query.recordType))
        }
        for filter in filters {
            conditions.append(try condition(for: filter, zoneList: zoneList, recordType: query.recordType))
        }
        if let memberships, !memberships.isEmpty {
            conditions.append("r.membership IN (\(Self.placeholders(memberships.count)))")
            arguments += memberships.map(SQLiteValue.text)
        }
        if order.isEmpty {
            for sort in query.sorts {
                if case .user(let name) = sort.field, sort.relativeLocation == nil, orderedFields.contains(name) {
                    order.append(SortIndexes.expression(name, table: "r") + (sort.ascending ? " ASC" : " DESC"))
                    // The index is partial on the type; a literal lets SQLite see that it applies.
                    conditions.append("r.type = \(SortIndexes.literal(query.recordType))")
                    continue
                }
                order.append(try orderTerm(for: sort) + (sort.ascending ? " ASC" : " DESC"))
            }
            order.append("r.id ASC")
        }
        sql = """
            SELECT \(SQLiteStoreTransaction.recordColumns), r.zone_id FROM \(from)
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order.joined(separator: ", ")) LIMIT \(limit) OFFSET \(offset)
            """
    }

    /// A filter that selects by one exact indexed value (at most one index row per record).
    static func canDrive(_ filter: Filter) -> Bool {
        guard case .user = filter.field, filter.comparator == .equals || filter.comparator == .listContains,
              !filter.value.type.isList, let value = filter.value.elements.first else { return false }
        return sqlValue(value) != nil
    }

    // MARK: Filters

    private mutating func condition(for filter: Filter, zoneList: String, recordType: String) throws(CloudKitError) -> String {
        switch filter.field {
        case .system(let field): return try systemCondition(filter, column: Self.column(for: field))
        case .user(let name): return try userCondition(filter, field: name, zoneList: zoneList, recordType: recordType)
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
            let values = filter.value.elements.compactMap(Self.sqlValue)
            arguments.append(contentsOf: values)
            let list = Array(repeating: "?", count: values.count).joined(separator: ",")
            return "\(column) \(filter.comparator == .in ? "IN" : "NOT IN") (\(list))"
        case .beginsWith, .notBeginsWith:
            guard case .text(let prefix)? = scalar else { throw invalid(filter, "needs a STRING value") }
            arguments.append(contentsOf: [.text(prefix), .text(prefix + "\u{10FFFF}")])
            let positive = "(\(column) >= ? AND \(column) < ?)"
            return filter.comparator == .beginsWith ? positive : "NOT \(positive)"
        default:
            throw invalid(filter, "is not supported on system field \(filter.field)")
        }
    }

    private mutating func userCondition(_ filter: Filter, field: String, zoneList: String, recordType: String) throws(CloudKitError) -> String {
        let select = "SELECT f.record_id FROM field_index f WHERE f.zone_id IN (\(zoneList)) AND f.type = ? AND f.field = ? AND f.slot = ?"
        func subquery(_ slot: Int64, _ valueCondition: String, _ values: [SQLiteValue]) -> String {
            arguments.append(contentsOf: [.text(recordType), .text(field), .integer(slot)])
            arguments.append(contentsOf: values)
            return "r.id IN (\(select) AND \(valueCondition))"
        }
        func presence() -> String {
            arguments.append(contentsOf: [.text(recordType), .text(field), .integer(FieldIndexer.presenceSlot)])
            return "r.id IN (\(select))"
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
            let have = presence()
            return "\(have) AND r.id NOT IN (\(select) AND f.value = ?)" + appendingSubqueryArguments(recordType, field, slot, values)
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals:
            guard values.count == 1, let bound = Self.typeClassBound(values[0]) else {
                throw invalid(filter, "needs one STRING, INT64, DOUBLE or TIMESTAMP value")
            }
            return subquery(slot, "f.value \(Self.sqlOperator(filter.comparator)) ? AND \(bound)", values)
        case .in:
            guard !values.isEmpty else { return "0" }
            return subquery(slot, "f.value IN (\(Self.placeholders(values.count)))", values)
        case .notIn, .notListContainsAny:
            let have = presence()
            guard !values.isEmpty else { return have }
            return "\(have) AND r.id NOT IN (\(select) AND f.value IN (\(Self.placeholders(values.count)))"
                + appendingSubqueryArguments(recordType, field, slot, values) + ")"
        case .listContainsAll:
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
            let have = presence()
            return "\(have) AND r.id NOT IN (\(select) AND \(range))" + appendingSubqueryArguments(recordType, field, slot, bounds)
        case .containsAllTokens, .containsAnyTokens:
            guard values.count == 1, case .text(let text) = values[0] else { throw invalid(filter, "needs a STRING value") }
            let tokens = Array(Set(FieldIndexer.tokens(of: text))).sorted()
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
            arguments.append(contentsOf: [.text(recordType), .text(field), .integer(slot),
                                          .real(center.latitude - latitudeSpan), .real(center.latitude + latitudeSpan)])
            let distanceSQL = Self.distanceSQL(latitude: "f.value", longitude: "g.value", from: center)
            arguments.append(.real(distance))
            return """
                r.id IN (SELECT f.record_id FROM field_index f JOIN field_index g ON g.record_id = f.record_id \
                AND g.field = f.field AND g.slot = \(FieldIndexer.longitudeSlot) WHERE f.zone_id IN (\(zoneList)) \
                AND f.type = ? AND f.field = ? AND f.slot = ? AND f.value BETWEEN ? AND ? AND \(distanceSQL) <= ?)
                """
        }
    }

    private mutating func countAllOfTerms(_ count: Int, _ filter: Filter) throws(CloudKitError) {
        allOfTerms += count
        guard allOfTerms <= Limits.valuesPerAllFilter else {
            throw CloudKitError(.limitExceeded, "a query may hold at most \(Limits.valuesPerAllFilter) values across its LIST_CONTAINS_ALL, NOT_LIST_CONTAINS_ALL and CONTAINS_ALL_TOKENS filters (\(filter.comparator.rawValue) on '\(filter.field)' brings it to \(allOfTerms))")
        }
    }

    /// Appends the arguments of a subquery whose SQL was written inline after a `presence()` call.
    private mutating func appendingSubqueryArguments(_ recordType: String, _ field: String, _ slot: Int64, _ values: [SQLiteValue]) -> String {
        arguments.append(contentsOf: [.text(recordType), .text(field), .integer(slot)])
        arguments.append(contentsOf: values)
        return ""
    }

    // MARK: Sorts

    private func orderTerm(for sort: Sort) throws(CloudKitError) -> String {
        switch sort.field {
        case .system(let field):
            return Self.column(for: field)
        case .user(let name):
            guard Names.isValidFieldName(name) else { throw .badRequest("invalid sort field '\(name)'") }
            let first = "(SELECT min(s.value) FROM field_index s WHERE s.record_id = r.id AND s.field = '\(name)' AND s.slot = 0)"
            guard let center = sort.relativeLocation else { return first }
            let longitude = "(SELECT min(s.value) FROM field_index s WHERE s.record_id = r.id AND s.field = '\(name)' AND s.slot = \(FieldIndexer.longitudeSlot))"
            return Self.distanceSQL(latitude: first, longitude: longitude, from: center)
        }
    }

    // MARK: Helpers

    /// Haversine distance in metres, in SQL (SQLite's math functions).
    static func distanceSQL(latitude: String, longitude: String, from center: Location) -> String {
        let lat = center.latitude, lon = center.longitude
        return """
            (12742017.6 * asin(min(1, sqrt(pow(sin(radians(\(latitude) - (\(lat))) / 2), 2) + cos(radians(\(lat))) \
            * cos(radians(\(latitude))) * pow(sin(radians(\(longitude) - (\(lon))) / 2), 2)))))
            """
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

extension FieldType {
    var isList: Bool {
        if case .list = self { return true }
        return false
    }
}
