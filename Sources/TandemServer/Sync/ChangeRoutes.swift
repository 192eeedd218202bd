import TandemCore
import TandemHTTP
import TandemStore

/// changes/database, changes/zone, and the legacy records/changes and zones/changes
/// (CloudKit Web Services; private and shared databases).
enum ChangeRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "changes/database", method: "POST", databases: [.private, .shared],
                          summary: "Zones changed since a database syncToken (all current zones without one), with deletions and reasons",
                          requestSchema: "DatabaseChangesRequest", responseSchema: "DatabaseChangesResponse") { context in
                let body = try context.jsonBody()
                let result = try services.changes.databaseChanges(syncToken: try token(body, "syncToken"), limit: try limit(body),
                                                                  scope: context.scope)
                return Responses.json(.object(["zones": .array(result.zones.map(encode)), "syncToken": .string(result.syncToken),
                                               "moreComing": .bool(result.moreComing)]))
            },
            DatabaseRoute(operation: "zones/changes", method: "POST", databases: [.private],
                          summary: "Legacy: zones changed since metaSyncToken", requestSchema: "ZonesChangesRequest",
                          responseSchema: "ZonesChangesResponse") { context in
                let body = try context.jsonBody()
                let result = try services.changes.databaseChanges(syncToken: try token(body, "metaSyncToken"), limit: try limit(body),
                                                                  scope: context.scope)
                return Responses.json(.object(["zones": .array(result.zones.map(encode)), "metaSyncToken": .string(result.syncToken),
                                               "moreComing": .bool(result.moreComing)]))
            },
            DatabaseRoute(operation: "changes/zone", method: "POST", databases: [.private, .shared],
                          summary: "Records changed in zones since each zone's syncToken (tombstones keep their recordType)",
                          requestSchema: "ZoneChangesRequest", responseSchema: "ZoneChangesResponse") { context in
                let body = try context.jsonBody()
                let items = try RequestContext.items(body, "zones", limit: Limits.operationsPerRequest,
                                                     needed: "changes/zone needs 'zones', an array of {zoneID, syncToken?}")
                try refuseReverse(body)
                var requests: [ChangeFeedService.ZoneRequest] = []
                for (index, item) in items.enumerated() {
                    guard case .object(let entry) = item, let zoneJSON = entry["zoneID"] else {
                        throw CloudKitError.badRequest("zones[\(index)] needs a 'zoneID'")
                    }
                    try refuseReverse(entry)
                    // Each entry may override the top-level options (CloudKit Web Services).
                    requests.append(ChangeFeedService.ZoneRequest(
                        zoneID: try RecordCodec.decodeZoneID(zoneJSON), syncToken: try token(entry, "syncToken"),
                        resultsLimit: try limit(entry["resultsLimit"] == nil ? body : entry, maximum: Limits.changesPerResponse),
                        desiredKeys: try RecordOperation.desiredKeys(entry["desiredKeys"] ?? body["desiredKeys"]),
                        desiredRecordTypes: try recordTypes(entry["desiredRecordTypes"] ?? body["desiredRecordTypes"]),
                        // CloudKit JS sends numbersAsStrings inside each zone entry, with desiredKeys.
                        numbersAsStrings: try RecordRoutes.bool(entry["numbersAsStrings"] == nil ? body : entry, "numbersAsStrings",
                                                                default: false)))
                }
                let results = try services.changes.zoneChanges(requests, scope: context.scope)
                let options = try RecordRoutes.options(context, body, desiredKeys: nil)
                let zones: [JSONValue] = zip(requests, results).map { request, result in
                    switch result {
                    case .changes(let zoneID, let syncToken, let records, let moreComing, let desiredKeys):
                        var recordOptions = options
                        recordOptions.desiredKeys = desiredKeys
                        recordOptions.numbersAsStrings = request.numbersAsStrings
                        return .object(["zoneID": RecordCodec.encodeZoneID(zoneID), "syncToken": .string(syncToken),
                                        "moreComing": .bool(moreComing),
                                        "records": .array(records.map { RecordCodec.encodeForResponse($0, options: recordOptions) })])
                    case .failed(let error):
                        return ErrorCodec.encode(error, uuid: context.uuid)
                    }
                }
                return Responses.json(.object(["zones": .array(zones)]))
            },
            DatabaseRoute(operation: "records/changes", method: "POST", databases: [.private, .shared],
                          summary: "Legacy: records changed in one zone since syncToken", requestSchema: "RecordsChangesRequest",
                          responseSchema: "RecordsChangesResponse") { context in
                let body = try context.jsonBody()
                guard let zoneJSON = body["zoneID"], !zoneJSON.isNull else { throw CloudKitError.badRequest("records/changes needs a 'zoneID'") }
                try refuseReverse(body)
                let request = ChangeFeedService.ZoneRequest(zoneID: try RecordCodec.decodeZoneID(zoneJSON), syncToken: try token(body, "syncToken"),
                                                            resultsLimit: try limit(body, maximum: Limits.changesPerResponse),
                                                            desiredKeys: try RecordOperation.desiredKeys(body["desiredKeys"]),
                                                            desiredRecordTypes: try recordTypes(body["desiredRecordTypes"]),
                                                            numbersAsStrings: try RecordRoutes.bool(body, "numbersAsStrings", default: false))
                let options = try RecordRoutes.options(context, body, desiredKeys: request.desiredKeys)
                switch try services.changes.zoneChanges([request], scope: context.scope)[0] {
                case .changes(_, let syncToken, let records, let moreComing, _):
                    return Responses.json(.object(["records": .array(records.map { RecordCodec.encodeForResponse($0, options: options) }),
                                                   "syncToken": .string(syncToken), "moreComing": .bool(moreComing), "reverse": .bool(false)]))
                case .failed(let error):
                    throw error
                }
            },
        ]
    }

    static func encode(_ change: DatabaseChange) -> JSONValue {
        var o: JSONObject = ["zoneID": RecordCodec.encodeZoneID(change.zoneID)]
        if change.deleted {
            o["deleted"] = .bool(true)
            o["reason"] = .string(change.reason ?? "DELETED")
        }
        return .object(o)
    }

    static func token(_ body: JSONObject, _ key: String) throws(CloudKitError) -> String? {
        guard let value = body[key], !value.isNull else { return nil }
        guard let text = value.stringValue, !text.isEmpty else { throw .badRequest("\(key) must be a string from an earlier response") }
        return text
    }

    /// `resultsLimit`: default 200, at most `maximum` (larger values are lowered to it).
    static func limit(_ body: JSONObject, maximum: Int = Limits.resultsPerResponse) throws(CloudKitError) -> Int {
        guard let value = body["resultsLimit"], !value.isNull else { return Limits.resultsPerResponse }
        guard let n = value.int64Value, n >= 1 else { throw .badRequest("resultsLimit must be a whole number from 1 to \(maximum)") }
        return Int(min(n, Int64(maximum)))
    }

    static func recordTypes(_ json: JSONValue?) throws(CloudKitError) -> Set<String>? {
        guard let json, !json.isNull else { return nil }
        guard case .array(let items) = json else { throw .badRequest("desiredRecordTypes must be an array of record type names") }
        var types = Set<String>()
        for item in items {
            guard let name = item.stringValue else { throw .badRequest("desiredRecordTypes must be an array of record type names") }
            types.insert(name)
        }
        return types
    }

    /// Changes come oldest first; `reverse: true` is refused rather than ignored.
    static func refuseReverse(_ body: JSONObject) throws(CloudKitError) {
        guard let value = body["reverse"], !value.isNull else { return }
        guard let reverse = value.boolValue else { throw .badRequest("'reverse' must be true or false") }
        if reverse { throw .badRequest("reverse: true is not supported; changes are returned oldest first") }
    }
}
