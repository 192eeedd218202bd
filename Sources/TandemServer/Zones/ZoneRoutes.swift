import TandemCore
import TandemHTTP
import TandemStore

/// zones/list, zones/lookup, zones/modify (CloudKit Web Services).
enum ZoneRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "zones/list", method: "GET", databases: [.private, .shared], summary: "List every zone of the database",
                          requestSchema: nil, responseSchema: "ZonesResponse") { context in
                try respond(try services.zones.list(scope: context.scope), context, services)
            },
            DatabaseRoute(operation: "zones/lookup", method: "POST", databases: [.private, .shared], summary: "Fetch zones by ID",
                          requestSchema: "ZonesLookupRequest", responseSchema: "ZonesResponse") { context in
                let body = try context.jsonBody()
                guard case .array(let items)? = body["zones"] else { throw CloudKitError.badRequest("zones/lookup needs a 'zones' array of zone IDs") }
                var ids: [ZoneID] = []
                for item in items { ids.append(try RecordCodec.decodeZoneID(item["zoneID"] ?? item)) }
                return try respond(try services.zones.lookup(ids, scope: context.scope), context, services)
            },
            DatabaseRoute(operation: "zones/modify", method: "POST", databases: [.private, .shared],
                          summary: "Create or delete custom zones (in the shared database: delete = leave the zone's shares)",
                          requestSchema: "ZonesModifyRequest", responseSchema: "ZonesResponse") { context in
                let body = try context.jsonBody()
                let items = try RequestContext.items(body, "operations", limit: Limits.operationsPerRequest,
                                                     needed: "zones/modify needs an 'operations' array")
                var operations: [ZoneService.Operation] = []
                for (index, item) in items.enumerated() {
                    guard let type = item["operationType"]?.stringValue else {
                        throw CloudKitError.badRequest("operations[\(index)] needs 'operationType' (create or delete)")
                    }
                    guard let zoneJSON = item["zone"]?["zoneID"] ?? item["zoneID"] else {
                        throw CloudKitError.badRequest("operations[\(index)] needs 'zone': {'zoneID': {...}}")
                    }
                    let zoneID = try RecordCodec.decodeZoneID(zoneJSON)
                    switch type {
                    case "create": operations.append(.create(zoneID))
                    case "delete": operations.append(.delete(zoneID))
                    default: throw CloudKitError.badRequest("operations[\(index)]: operationType must be create or delete, not '\(type)'")
                    }
                }
                if context.database == .shared {
                    return try respond(try services.zones.leave(operations, scope: context.scope), context, services)
                }
                return try respond(try services.zones.modify(operations, scope: context.scope), context, services)
            },
        ]
    }

    static func respond(_ results: [ZoneService.ZoneResult], _ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        // Zone tokens carry the store's generation (decisions P78).
        let generation = results.contains { if case .zone = $0 { true } else { false } }
            ? try services.store.read { try $0.generation(accepting: nil).current } : 0
        let zones: [JSONValue] = results.map { result in
            switch result {
            case .zone(let zoneID, let stored, let shares, let isShared):
                // A participant's token names them and the shares they read the zone through.
                let viewer = shares == nil ? 0 : FeedTags.viewer(context.user?.recordName ?? "")
                let token = services.tokens.zoneToken(stored, generation: generation, viewer: viewer, shares: shares ?? 0)
                var zone: JSONObject = ["zoneID": RecordCodec.encodeZoneID(zoneID), "syncToken": .string(token),
                                        "atomic": .bool(!zoneID.isDefaultZone)]
                // CKRecordZone.share: a reference to the zone-wide share record, as a record's `share`.
                if isShared {
                    zone["share"] = ["recordName": .string(Share.zoneWideRecordName), "zoneID": RecordCodec.encodeZoneID(zoneID)]
                }
                return .object(zone)
            case .deleted(let zoneID):
                return .object(["zoneID": RecordCodec.encodeZoneID(zoneID), "deleted": .bool(true)])
            case .failed(let error):
                return ErrorCodec.encode(error, uuid: context.uuid)
            }
        }
        return Responses.json(.object(["zones": .array(zones)]))
    }
}
