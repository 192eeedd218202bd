/// Encodes query dictionaries as a client sends them: the inverse of `QueryCodec.decodeQuery`
/// (CloudKit Web Services: Types, "Query Dictionary", "Filter Dictionary", "Sort Descriptor Dictionary").
extension QueryCodec {
    public static func encodeQuery(_ query: Query) -> JSONValue {
        var o: JSONObject = ["recordType": .string(query.recordType)]
        if !query.filters.isEmpty { o["filterBy"] = .array(query.filters.map(encodeFilter)) }
        if !query.sorts.isEmpty { o["sortBy"] = .array(query.sorts.map(encodeSort)) }
        return .object(o)
    }

    public static func encodeFilter(_ filter: Filter) -> JSONValue {
        var o: JSONObject = ["comparator": .string(filter.comparator.rawValue)]
        encodeField(filter.field, into: &o)
        o["fieldValue"] = FieldCodec.encodeField(filter.value)
        if let distance = filter.distance { o["distance"] = .double(distance) }
        return .object(o)
    }

    public static func encodeSort(_ sort: Sort) -> JSONValue {
        var o = JSONObject()
        encodeField(sort.field, into: &o)
        o["ascending"] = .bool(sort.ascending)
        if let location = sort.relativeLocation {
            o["relativeLocation"] = .object(["value": FieldCodec.encodeValue(.location(location))])
        }
        return .object(o)
    }

    static func encodeField(_ field: QueryField, into o: inout JSONObject) {
        switch field {
        case .user(let name): o["fieldName"] = .string(name)
        case .system(let system): o["systemFieldName"] = .string(system.rawValue)
        }
    }
}
