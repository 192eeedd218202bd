/// Decodes and encodes query dictionaries (CloudKit Web Services: Types, "Query Dictionary",
/// "Filter Dictionary", "Sort Descriptor Dictionary").
public enum QueryCodec {
    public static func decodeQuery(_ json: JSONValue) throws(CloudKitError) -> Query {
        guard case .object(let o) = json else { throw .badRequest("'query' must be a dictionary") }
        guard let type = o["recordType"]?.stringValue else { throw .badRequest("query needs a 'recordType' string") }
        guard Names.isValidRecordType(type) else { throw .badRequest("query recordType '\(type)' is not a valid type name") }
        var filters: [Filter] = []
        if let filterJSON = o["filterBy"], !filterJSON.isNull {
            guard case .array(let items) = filterJSON else { throw .badRequest("query 'filterBy' must be an array") }
            for item in items { filters.append(try decodeFilter(item)) }
            let values = filters.reduce(0) { $0 + $1.value.elements.count }
            guard values <= Limits.valuesPerQuery else {
                throw .badRequest("a query's filters take at most \(Limits.valuesPerQuery) list values in all; got \(values)")
            }
        }
        var sorts: [Sort] = []
        if let sortJSON = o["sortBy"], !sortJSON.isNull {
            guard case .array(let items) = sortJSON else { throw .badRequest("query 'sortBy' must be an array") }
            for item in items { sorts.append(try decodeSort(item)) }
        }
        return Query(recordType: type, filters: filters, sorts: sorts)
    }

    static func decodeField(_ o: JSONObject, context: String) throws(CloudKitError) -> QueryField {
        if let system = o["systemFieldName"]?.stringValue {
            guard let field = SystemField(rawValue: system) ?? SystemField(schemaName: system) else {
                let known = SystemField.allCases.map(\.rawValue).joined(separator: ", ")
                throw .badRequest("\(context): unknown systemFieldName '\(system)' (known: \(known))")
            }
            return .system(field)
        }
        guard let name = o["fieldName"]?.stringValue else {
            throw .badRequest("\(context) needs 'fieldName' or 'systemFieldName'")
        }
        if name.hasPrefix("___") {
            guard let field = SystemField(schemaName: name) else {
                throw .badRequest("\(context): unknown system field '\(name)'")
            }
            return .system(field)
        }
        guard Names.isValidFieldName(name) else { throw .badRequest("\(context): invalid field name '\(name)'") }
        return .user(name)
    }

    public static func decodeFilter(_ json: JSONValue) throws(CloudKitError) -> Filter {
        guard case .object(let o) = json else { throw .badRequest("each filter must be a dictionary") }
        guard let comparatorName = o["comparator"]?.stringValue else { throw .badRequest("filter needs a 'comparator'") }
        guard let comparator = Comparator(rawValue: comparatorName) else {
            throw .badRequest("unknown comparator '\(comparatorName)'")
        }
        let field = try decodeField(o, context: "filter")
        guard let valueJSON = o["fieldValue"] else {
            throw .badRequest("filter on '\(field)' needs a 'fieldValue'")
        }
        var value = try decodeFilterValue(valueJSON, field: field, comparator: comparator)
        guard value.elements.count <= Limits.valuesPerFilter else {
            throw .badRequest("\(comparatorName) on '\(field)' takes at most \(Limits.valuesPerFilter) values; got \(value.elements.count)")
        }
        if comparator.takesList, case .list = value {} else if comparator.takesList {
            value = .list([value], of: scalarType(of: value))
        }
        var distance: Double?
        if comparator == .near {
            guard case .location = value else {
                throw .badRequest("NEAR on '\(field)' needs a LOCATION fieldValue")
            }
            guard let d = o["distance"]?.doubleValue, d.isFinite, d >= 0 else {
                throw .badRequest("NEAR on '\(field)' needs a non-negative 'distance' in metres")
            }
            distance = d
        }
        return Filter(comparator: comparator, field: field, value: value, distance: distance)
    }

    static func scalarType(of value: FieldValue) -> FieldType.ScalarType {
        switch value.type {
        case .scalar(let s), .list(let s): s
        }
    }

    static func decodeFilterValue(_ json: JSONValue, field: QueryField, comparator: Comparator) throws(CloudKitError) -> FieldValue {
        // System fields holding names accept a plain string or a reference dictionary.
        if case .system(let system) = field {
            switch system {
            case .recordName, .share, .parent, .createdUserRecordName, .modifiedUserRecordName:
                let inner = json["value"] ?? json
                if case .array(let items) = inner {
                    var names: [FieldValue] = []
                    for item in items { names.append(.string(try nameValue(item, field: system))) }
                    return .list(names, of: .string)
                }
                return .string(try nameValue(inner, field: system))
            case .createdTimestamp, .modifiedTimestamp:
                break
            }
        }
        return try FieldCodec.decodeField(json, name: "fieldValue")
    }

    static func nameValue(_ json: JSONValue, field: SystemField) throws(CloudKitError) -> String {
        if let s = json.stringValue { return s }
        if let s = json["recordName"]?.stringValue { return s }
        if let s = json["userRecordName"]?.stringValue { return s }
        throw .badRequest("filter on \(field.rawValue) needs a name or a reference dictionary")
    }

    public static func decodeSort(_ json: JSONValue) throws(CloudKitError) -> Sort {
        guard case .object(let o) = json else { throw .badRequest("each sortBy entry must be a dictionary") }
        let field = try decodeField(o, context: "sort")
        var ascending = true
        if let a = o["ascending"], !a.isNull {
            guard let b = a.boolValue else { throw .badRequest("sort 'ascending' must be a boolean") }
            ascending = b
        }
        var relative: Location?
        if let r = o["relativeLocation"], !r.isNull {
            let value = r["value"] ?? r
            relative = try FieldCodec.decodeLocation(value, name: "relativeLocation")
        }
        return Sort(field: field, ascending: ascending, relativeLocation: relative)
    }
}
