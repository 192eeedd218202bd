import TandemCore
import TandemHTTP
import TandemStore

/// records/modify, records/lookup and records/query (CloudKit Web Services).
enum RecordRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "records/modify", method: "POST", databases: [.private, .shared, .public],
                          summary: "Create, update, replace or delete records (seven operation types, atomic per zone)",
                          requestSchema: "RecordsModifyRequest", responseSchema: "RecordsResponse") { try modify($0, services) },
            DatabaseRoute(operation: "records/lookup", method: "POST", databases: [.private, .shared, .public],
                          summary: "Fetch records by name", requestSchema: "RecordsLookupRequest",
                          responseSchema: "RecordsResponse") { try lookup($0, services) },
            DatabaseRoute(operation: "records/query", method: "POST", databases: [.private, .shared, .public],
                          summary: "Query records of one type with filters and sorts; paged by continuationMarker",
                          requestSchema: "RecordsQueryRequest", responseSchema: "RecordsQueryResponse") { try query($0, services) },
        ]
    }

    static func zoneID(_ body: JSONObject) throws(CloudKitError) -> ZoneID {
        guard let json = body["zoneID"], !json.isNull else { return .defaultZone }
        return try RecordCodec.decodeZoneID(json)
    }

    static func bool(_ body: JSONObject, _ key: String, default value: Bool) throws(CloudKitError) -> Bool {
        guard let json = body[key], !json.isNull else { return value }
        guard let b = json.boolValue else { throw .badRequest("'\(key)' must be true or false") }
        return b
    }

    static func options(_ context: RequestContext, _ body: JSONObject, desiredKeys: Set<String>?) throws(CloudKitError) -> RecordCodec.EncodingOptions {
        let numbersAsStrings = try bool(body, "numbersAsStrings", default: false)
        let base = context.baseURL
        let container = context.container
        let environment = context.environment.rawValue
        let database = context.database.rawValue
        let reader = context.user?.recordName
        let signer = context.assetSigner
        return RecordCodec.EncodingOptions(desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings) { record, field, asset in
            AssetRoutes.downloadURL(base: base, container: container, environment: environment, database: database,
                                    record: record, field: field, checksum: asset.fileChecksum, reader: reader, signer: signer)
        }
    }

    static func encode(_ results: [RecordService.ItemResult], uuid: String, options: RecordCodec.EncodingOptions,
                       perItemKeys: [Set<String>?] = []) -> JSONValue {
        let items: [JSONValue] = results.enumerated().map { index, result in
            switch result {
            case .saved(let record):
                var itemOptions = options
                if index < perItemKeys.count, let keys = perItemKeys[index] { itemOptions.desiredKeys = keys }
                return RecordCodec.encodeForResponse(record, options: itemOptions)
            case .deleted(let name):
                return .object(["recordName": .string(name), "deleted": .bool(true)])
            case .failed(let error):
                return ErrorCodec.encode(error, uuid: uuid, recordOptions: options)
            }
        }
        return .object(["records": .array(items)])
    }

    static func modify(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let body = try context.jsonBody()
        let items = try RequestContext.items(body, "operations", limit: Limits.operationsPerRequest,
                                             needed: "records/modify needs an 'operations' array")
        var operations: [RecordOperation] = []
        for (index, item) in items.enumerated() { operations.append(try RecordOperation.decode(item, index: index)) }
        let zone = try zoneID(body)
        let atomic = try bool(body, "atomic", default: true)
        let desired = try RecordOperation.desiredKeys(body["desiredKeys"])
        let results = try services.records.modify(operations, zoneID: zone, atomic: atomic, scope: context.recordScope)
        let options = try options(context, body, desiredKeys: desired)
        return Responses.json(encode(results, uuid: context.uuid, options: options, perItemKeys: operations.map(\.desiredKeys)))
    }

    static func lookup(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let body = try context.jsonBody()
        let items = try RequestContext.items(body, "records", limit: Limits.resultsPerResponse,
                                             needed: "records/lookup needs a 'records' array of {recordName}")
        var names: [String] = []
        var perItemKeys: [Set<String>?] = []
        for (index, item) in items.enumerated() {
            guard let name = item["recordName"]?.stringValue, Names.isValidRecordOrZoneName(name) else {
                throw CloudKitError.badRequest("records[\(index)] needs a valid 'recordName'")
            }
            names.append(name)
            perItemKeys.append(try RecordOperation.desiredKeys(item["desiredKeys"]))
        }
        let options = try options(context, body, desiredKeys: try RecordOperation.desiredKeys(body["desiredKeys"]))
        // Stored field text copied as is when nothing reshapes it (E25).
        let reshaped = options.desiredKeys != nil || options.numbersAsStrings || perItemKeys.contains { $0 != nil }
        let results = try services.records.lookup(names, zoneID: try zoneID(body), scope: context.recordScope, decodeFields: reshaped)
        return Responses.json(encode(results, uuid: context.uuid, options: options, perItemKeys: perItemKeys))
    }

    static func query(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let body = try context.jsonBody()
        guard let queryJSON = body["query"] else { throw CloudKitError.badRequest("records/query needs a 'query'") }
        let query = try QueryCodec.decodeQuery(queryJSON)
        var limit = Limits.resultsPerResponse
        if let l = body["resultsLimit"], !l.isNull {
            guard let n = l.int64Value, n >= 1 else { throw CloudKitError.badRequest("resultsLimit must be a whole number from 1 to 200") }
            limit = Int(min(n, Int64(Limits.resultsPerResponse)))
        }
        let zoneWide = try bool(body, "zoneWide", default: false)
        let zone: ZoneID? = body["zoneID"].flatMap { $0.isNull ? nil : $0 } == nil ? nil : try zoneID(body)
        let fingerprint = ContinuationMarker.fingerprint(query: query, zone: zone, zoneWide: zoneWide)
        var after: QueryCursor?
        if let marker = body["continuationMarker"], !marker.isNull {
            guard let text = marker.stringValue else { throw CloudKitError.badRequest("continuationMarker must be a string") }
            after = try services.tokens.decodeMarker(text, fingerprint: fingerprint)
        }
        let options = try options(context, body, desiredKeys: try RecordOperation.desiredKeys(body["desiredKeys"]))
        // The stored fields' text is copied into the response as is, undecoded, when nothing reshapes it (E25).
        let page = try services.records.query(query, zoneID: zone, zoneWide: zoneWide, limit: limit, after: after, scope: context.recordScope,
                                              decodeFields: options.desiredKeys != nil || options.numbersAsStrings)
        var response: JSONObject = ["records": .array(page.records.map { RecordCodec.encodeForResponse($0, options: options) })]
        if page.more, let cursor = page.cursor {
            response["continuationMarker"] = .string(services.tokens.encodeMarker(cursor, fingerprint: fingerprint))
        }
        return Responses.json(.object(response))
    }
}
