import TandemCore
import TandemHTTP
import TandemStore

/// `shares/invitations` and `shares/declineInvitation` under `/tandem/1/{container}/{environment}/`
/// (decisions A33): a signed-in person's pending invitations, and declining them.
extension ShareRoutes {
    static func invitationRoutes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "shares/invitations", method: "POST", databases: [],
                          summary: "The shares you are invited to and have not accepted (A33)", requestSchema: nil,
                          responseSchema: "InvitationsResponse") { context in
                let invitations = try services.shares.invitations(user: context.user!, scope: context.scope)
                return Responses.json(.object(["invitations": .array(invitations.map(encode))]))
            },
            DatabaseRoute(operation: "shares/declineInvitation", method: "POST", databases: [],
                          summary: "Decline invitations by shortGUID: you are removed as leaving does (A33)",
                          requestSchema: "ShortGUIDsRequest", responseSchema: "DeclineInvitationResults") { context in
                let guids = try shortGUIDs(try context.jsonBody()).map(\.value)
                let results = try services.shares.declineInvitations(guids, user: context.user!, scope: context.scope)
                let items: [JSONValue] = results.map { result in
                    switch result {
                    case .success(let guid): .object(["shortGUID": .string(guid), "status": .string("DECLINED")])
                    case .failure(let error): ErrorCodec.encode(error, uuid: context.uuid)
                    }
                }
                return Responses.json(.object(["results": .array(items)]))
            },
        ]
    }

    static func encode(_ invitation: ShareService.Invitation) -> JSONValue {
        var o: JSONObject = [
            "shortGUID": .string(invitation.shortGUID), "shareURL": .string(invitation.url), "title": .string(invitation.title),
            "ownerIdentity": ShareCodec.encodeIdentity(invitation.ownerIdentity),
            "participantType": .string(invitation.role.rawValue), "participantPermission": .string(invitation.permission.rawValue),
            "participantStatus": .string(Share.AcceptanceStatus.pending.rawValue),
            "zoneID": RecordCodec.encodeZoneID(invitation.zoneID), "invitedAt": .int(invitation.invitedAt),
        ]
        if let root = invitation.rootRecordName { o["rootRecordName"] = .string(root) }
        if let type = invitation.rootRecordType { o["rootRecordType"] = .string(type) }
        return .object(o)
    }
}
