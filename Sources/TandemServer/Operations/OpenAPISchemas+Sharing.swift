import TandemCore

/// Component schemas for sharing: share metadata, participants, access requests, discovery.
extension OpenAPISchemas {
    static var sharing: JSONObject {
        let lookupInfo = object(["emailAddress": string, "phoneNumber": string, "userRecordName": string])
        let identity = object(["userRecordName": string, "nameComponents": object(["givenName": string, "familyName": string]),
                               "lookupInfo": lookupInfo, "hasiCloudAccount": boolean, "avatarURL": string])
        let enumeration = { (values: [String]) -> JSONValue in ["type": "string", "enum": .array(values.map(JSONValue.string))] }
        let participant = object([
            "participantId": string, "userIdentity": identity,
            "type": enumeration(Share.Role.allCases.map(\.rawValue)),
            "permission": enumeration(Share.Permission.allCases.map(\.rawValue)),
            "acceptanceStatus": enumeration(Share.AcceptanceStatus.allCases.map(\.rawValue)),
            "isApprovedRequester": boolean, "dateAddedToShare": integer,
        ])
        let shortGUID = object(["value": string, "shouldFetchRootRecord": boolean, "rootRecordDesiredKeys": array(string)], required: ["value"])
        let metadata = object([
            "containerIdentifier": string, "environment": string, "databaseScope": enumeration(["PRIVATE", "SHARED"]),
            "shortGUID": string, "zoneID": ref("ZoneID"), "rootRecordName": string, "rootRecord": ref("Record"), "share": ref("Record"),
            "ownerIdentity": identity, "participantType": string, "participantStatus": string, "participantPermission": string,
            "allowsAccessRequests": boolean,
            "potentialMatchList": array(object(["participantId": string, "contactInformation": object(["emailAddress": string, "phoneNumber": string])])),
        ])
        return [
            "ShareParticipant": participant,
            "UserIdentity": identity,
            "ShortGUIDsRequest": object(["shortGUIDs": array(shortGUID)], required: ["shortGUIDs"]),
            "ShortGUIDResults": object(["results": array(["oneOf": [metadata, ref("Error")]])]),
            "RequestAccessRequest": object(["shortGUIDs": array(shortGUID), "shareURLs": array(string)]),
            "RequestAccessResults": object(["results": array(["oneOf": [object(["shortGUID": string, "status": enumeration(["REQUESTED"])]),
                                                                        ref("Error")]])]),
            "RequesterActionRequest": object(["shortGUID": string, "userRecordNames": array(string),
                                              "permission": enumeration(["READ_ONLY", "READ_WRITE"])], required: ["shortGUID", "userRecordNames"]),
            "ShareResponse": object(["share": ref("Record")]),
            "InvitationsResponse": object(["invitations": array(object([
                "shortGUID": string, "shareURL": string, "title": string, "ownerIdentity": identity,
                "participantType": string, "participantPermission": string, "participantStatus": enumeration(["INVITED"]),
                "zoneID": ref("ZoneID"), "rootRecordName": string, "rootRecordType": string, "invitedAt": integer,
            ]))]),
            "DeclineInvitationResults": object(["results": array(["oneOf": [object(["shortGUID": string, "status": enumeration(["DECLINED"])]),
                                                                            ref("Error")]])]),
            "LookupInfosRequest": object(["lookupInfos": array(lookupInfo)], required: ["lookupInfos"]),
            "UsersLookupRequest": object(["users": array(object(["emailAddress": string, "userRecordName": string]))], required: ["users"]),
            "Users": object(["users": array(ref("User"))]),
            "ContactsLookupRequest": object(["contacts": array(object(["firstName": string, "lastName": string,
                                                                       "emailAddresses": array(string), "phoneNumbers": array(string)]))]),
            "DiscoverabilityRequest": object(["discoverable": boolean], required: ["discoverable"]),
            "AssociationFileInfo": object(["domain": string, "source": enumeration(["upload", "fetch"]), "bytes": integer,
                                           "storedAt": integer, "expiresAt": integer, "version": integer]),
            "LinkMatch": object(["decision": enumeration(["open", "blocked", "noMatch"]),
                                 "rule": object(["location": string, "text": string]), "entitlement": string,
                                 "file": object(["domain": string, "source": string, "storedAt": integer, "expiresAt": integer, "version": integer]),
                                 "reason": string], required: ["decision"]),
        ]
    }
}
