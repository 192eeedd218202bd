/// Reads the share keys and identities of responses, as a client holds them: the inverse of
/// `ShareCodec.encode(_:into:)`, `encodeParticipant` and `encodeIdentity`. Lenient: a response
/// key the client does not understand is skipped rather than refused.
extension ShareCodec {
    /// The share keys of a share record dictionary; nil when it has no `shortGUID` (not a share).
    public static func decodeShare(_ record: JSONObject) -> Share? {
        guard let guid = record["shortGUID"]?.stringValue else { return nil }
        let participants = record["participants"]?.arrayValue?.compactMap(decodeParticipantDictionary) ?? []
        var share = Share(shortGUID: guid, url: record["url"]?.stringValue, rootRecordName: nil,
                          publicPermission: record["publicPermission"]?.stringValue.flatMap(Share.Permission.init) ?? .none,
                          participants: participants,
                          currentUserParticipant: record["currentUserParticipant"].flatMap(decodeParticipantDictionary),
                          allowsAccessRequests: record["allowsAccessRequests"]?.boolValue ?? false,
                          requesters: record["requesters"]?.arrayValue?.map(decodeIdentity),
                          blockedIdentities: record["blockedIdentities"]?.arrayValue?.map(decodeIdentity))
        if let options = record["allowedSharingOptions"] {
            share.allowedSharingOptions = (try? AllowedSharingOptions(json: options, context: "allowedSharingOptions")) ?? .standard
        }
        return share
    }

    /// A participant dictionary of a response; nil without a `participantId`.
    public static func decodeParticipantDictionary(_ json: JSONValue) -> Share.Participant? {
        guard let id = json["participantId"]?.stringValue else { return nil }
        return Share.Participant(participantID: id, identity: decodeIdentity(json["userIdentity"] ?? .null),
                                 role: json["type"]?.stringValue.flatMap(Share.Role.init) ?? .unknown,
                                 permission: json["permission"]?.stringValue.flatMap(Share.Permission.init) ?? .unknown,
                                 acceptanceStatus: json["acceptanceStatus"]?.stringValue.flatMap(Share.AcceptanceStatus.init) ?? .unknown,
                                 isApprovedRequester: json["isApprovedRequester"]?.boolValue ?? false,
                                 dateAddedToShare: json["dateAddedToShare"]?.int64Value)
    }

    /// A user identity dictionary of a response (`userRecordName`, `lookupInfo`, `nameComponents`,
    /// Tandem's `avatarURL`).
    public static func decodeIdentity(_ json: JSONValue) -> UserIdentity {
        let lookup = json["lookupInfo"]
        return UserIdentity(userRecordName: json["userRecordName"]?.stringValue ?? lookup?["userRecordName"]?.stringValue,
                            emailAddress: lookup?["emailAddress"]?.stringValue, phoneNumber: lookup?["phoneNumber"]?.stringValue,
                            givenName: json["nameComponents"]?["givenName"]?.stringValue,
                            familyName: json["nameComponents"]?["familyName"]?.stringValue,
                            avatarURL: json["avatarURL"]?.stringValue)
    }
}
