import TandemCore
import TandemHTTP
import TandemStore

/// records/resolve and records/accept (CloudKit Web Services, public database segment) and the
/// access-request actions under `/tandem/1/{container}/{environment}/shares/` (decisions D7).
enum ShareRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "records/resolve", method: "POST", databases: [.public],
                          summary: "Share metadata for share URL tokens (shortGUIDs)", requestSchema: "ShortGUIDsRequest",
                          responseSchema: "ShortGUIDResults") { context in
                let requests = try shortGUIDs(try context.jsonBody())
                let results = try services.shares.resolve(requests, user: context.user!, scope: context.scope)
                return respond(results, context)
            },
            DatabaseRoute(operation: "records/accept", method: "POST", databases: [.public],
                          summary: "Accept shares by their URL tokens (shortGUIDs)", requestSchema: "ShortGUIDsRequest",
                          responseSchema: "ShortGUIDResults") { context in
                let requests = try shortGUIDs(try context.jsonBody())
                let results = try services.shares.accept(requests, user: context.user!, scope: context.scope)
                return respond(results, context)
            },
        ]
    }

    /// `/tandem/1/{container}/{environment}/shares/...` routes.
    static func tandemRoutes(_ services: Services) -> [DatabaseRoute] {
        var routes = [
            DatabaseRoute(operation: "shares/requestAccess", method: "POST", databases: [],
                          summary: "Ask to join shares by URL or shortGUID (D7)", requestSchema: "RequestAccessRequest",
                          responseSchema: "RequestAccessResults") { context in
                let body = try context.jsonBody()
                var guids: [String] = []
                if case .array(let urls)? = body["shareURLs"] {
                    for url in urls {
                        guard let text = url.stringValue, let guid = text.split(separator: "/").last else {
                            throw CloudKitError.badRequest("shareURLs must be share URLs (…/share/{shortGUID})")
                        }
                        guids.append(String(guid))
                    }
                }
                guids += try shortGUIDs(body, required: guids.isEmpty).map(\.value)
                let results = try services.shares.requestAccess(guids, user: context.user!, scope: context.scope)
                let items: [JSONValue] = results.map { result in
                    switch result {
                    case .success(let guid): .object(["shortGUID": .string(guid), "status": .string("REQUESTED")])
                    case .failure(let error): ErrorCodec.encode(error, uuid: context.uuid)
                    }
                }
                return Responses.json(.object(["results": .array(items)]))
            },
        ]
        routes += invitationRoutes(services)
        for action in ShareService.RequestAction.allCases {
            routes.append(DatabaseRoute(operation: "shares/\(action.rawValue)", method: "POST", databases: [],
                                        summary: "Owner or administrator: \(action.rawValue) on a share (D7)",
                                        requestSchema: "RequesterActionRequest", responseSchema: "ShareResponse") { context in
                let body = try context.jsonBody()
                guard let guid = body["shortGUID"]?.stringValue else { throw CloudKitError.badRequest("\(action.rawValue) needs 'shortGUID'") }
                let items = try RequestContext.items(body, "userRecordNames", limit: Limits.participantsPerShare,
                                                     needed: "\(action.rawValue) needs 'userRecordNames', an array of user record names")
                let users = try items.map { item throws(CloudKitError) -> String in
                    guard let name = item.stringValue else { throw .badRequest("userRecordNames must be strings") }
                    return name
                }
                var permission = Share.Permission.readOnly
                if let p = body["permission"], !p.isNull {
                    guard let s = p.stringValue, let value = Share.Permission(rawValue: s), value == .readOnly || value == .readWrite else {
                        throw CloudKitError.badRequest("permission must be READ_ONLY or READ_WRITE")
                    }
                    permission = value
                }
                let record = try services.shares.manageRequesters(action, guid: guid, users: users, permission: permission,
                                                                   caller: context.user!, scope: context.scope)
                return Responses.json(.object(["share": RecordCodec.encodeRecord(record)]))
            })
        }
        return routes
    }

    static func shortGUIDs(_ body: JSONObject, required: Bool = true) throws -> [ShareService.ShortGUIDRequest] {
        guard body["shortGUIDs"] != nil || required else { return [] }
        let items = try RequestContext.items(body, "shortGUIDs", limit: Limits.operationsPerRequest,
                                             needed: "needs 'shortGUIDs', an array of {value}")
        return try items.enumerated().map { index, item in
            // Captures send {value}; a bare string is accepted too.
            guard let value = item["value"]?.stringValue ?? item.stringValue, !value.isEmpty else {
                throw CloudKitError.badRequest("shortGUIDs[\(index)] needs a 'value'")
            }
            let fetchRoot = item["shouldFetchRootRecord"]?.boolValue ?? false
            return ShareService.ShortGUIDRequest(value: value, shouldFetchRootRecord: fetchRoot,
                                                 rootRecordDesiredKeys: try RecordOperation.desiredKeys(item["rootRecordDesiredKeys"]))
        }
    }

    static func respond(_ results: [Result<ShareService.Metadata, CloudKitError>], _ context: RequestContext) -> HTTPResponse {
        let items: [JSONValue] = results.map { result in
            switch result {
            case .success(let metadata): encode(metadata)
            case .failure(let error): ErrorCodec.encode(error, uuid: context.uuid)
            }
        }
        return Responses.json(.object(["results": .array(items)]))
    }

    /// The ShortGUID result dictionary (CloudKit Web Services, Types).
    static func encode(_ metadata: ShareService.Metadata) -> JSONValue {
        var o: JSONObject = [
            "containerIdentifier": .string(metadata.container),
            "environment": .string(metadata.environment.rawValue),
            "databaseScope": .string(metadata.databaseScope),
            "shortGUID": .string(metadata.shortGUID),
            "ownerIdentity": ShareCodec.encodeIdentity(metadata.ownerIdentity),
            "participantType": .string(metadata.participantRole.rawValue),
            "participantStatus": .string(metadata.participantStatus.rawValue),
            "participantPermission": .string(metadata.participantPermission.rawValue),
            "allowsAccessRequests": .bool(metadata.allowsAccessRequests),
        ]
        if let zoneID = metadata.zoneID { o["zoneID"] = RecordCodec.encodeZoneID(zoneID) }
        if let root = metadata.rootRecordName { o["rootRecordName"] = .string(root) }
        if let share = metadata.share { o["share"] = RecordCodec.encodeRecord(share) }
        if let root = metadata.rootRecord { o["rootRecord"] = RecordCodec.encodeRecord(root) }
        if !metadata.potentialMatches.isEmpty {
            o["potentialMatchList"] = .array(metadata.potentialMatches.map { match in
                var contact = JSONObject()
                if let email = match.identity.emailAddress { contact["emailAddress"] = .string(email) }
                if let phone = match.identity.phoneNumber { contact["phoneNumber"] = .string(phone) }
                return .object(["participantId": .string(match.participantID), "contactInformation": .object(contact)])
            })
        }
        return .object(o)
    }
}
