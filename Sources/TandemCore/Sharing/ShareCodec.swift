/// The share keys of a share record dictionary and the user identity dictionaries of CloudKit
/// Web Services (Types: "Share Participant", "User Identity", "Lookup Info", "Name Components").
public enum ShareCodec {
    /// What a `records/modify` operation asks to change on a share. Nil members are unchanged.
    public struct Changes: Sendable, Hashable {
        public var publicPermission: Share.Permission?
        /// The complete list the share should have (the owner may be left out); nil keeps the list.
        public var participants: [ParticipantRequest]?
        public var allowsAccessRequests: Bool?
        /// The share's own narrowing of the container's sharing options (R16).
        public var allowedSharingOptions: AllowedSharingOptions?

        public init(publicPermission: Share.Permission? = nil, participants: [ParticipantRequest]? = nil,
                    allowsAccessRequests: Bool? = nil, allowedSharingOptions: AllowedSharingOptions? = nil) {
            self.publicPermission = publicPermission
            self.participants = participants
            self.allowsAccessRequests = allowsAccessRequests
            self.allowedSharingOptions = allowedSharingOptions
        }

        public var isEmpty: Bool {
            publicPermission == nil && participants == nil && allowsAccessRequests == nil && allowedSharingOptions == nil
        }
    }

    /// One entry of a request's `participants` array: who (by `participantId` or lookup info),
    /// with which role and permission.
    public struct ParticipantRequest: Sendable, Hashable {
        public var participantID: String?
        /// Only the lookup members (`userRecordName`, `emailAddress`, `phoneNumber`) are used.
        public var lookup: UserIdentity
        public var role: Share.Role?
        public var permission: Share.Permission?

        public init(participantID: String? = nil, lookup: UserIdentity, role: Share.Role? = nil, permission: Share.Permission? = nil) {
            self.participantID = participantID
            self.lookup = lookup
            self.role = role
            self.permission = permission
        }
    }

    // MARK: Encoding

    /// Adds the share keys to an encoded share record: `shortGUID`, `url`, `stableUrl`,
    /// `publicPermission`, `participants`, `owner`, `currentUserParticipant`,
    /// `allowsAccessRequests`, `allowedSharingOptions`, and for owners and administrators
    /// `requesters` and `blockedIdentities`.
    public static func encode(_ share: Share, into record: inout JSONObject) {
        record["shortGUID"] = .string(share.shortGUID)
        if let url = share.url {
            record["url"] = .string(url)
            var stable: JSONObject = ["shortGUID": .string(share.shortGUID)]
            if let host = hostname(of: url) { stable["displayedHostname"] = .string(host) }
            record["stableUrl"] = .object(stable)
        }
        record["publicPermission"] = .string(share.publicPermission.rawValue)
        record["participants"] = .array(share.participants.map(encodeParticipant))
        if let owner = share.owner { record["owner"] = encodeParticipant(owner) }
        if let current = share.currentUserParticipant { record["currentUserParticipant"] = encodeParticipant(current) }
        record["allowsAccessRequests"] = .bool(share.allowsAccessRequests)
        record["allowedSharingOptions"] = share.allowedSharingOptions.json
        if let requesters = share.requesters { record["requesters"] = .array(requesters.map(encodeIdentity)) }
        if let blocked = share.blockedIdentities { record["blockedIdentities"] = .array(blocked.map(encodeIdentity)) }
    }

    public static func encodeParticipant(_ participant: Share.Participant) -> JSONValue {
        var o: JSONObject = [
            "participantId": .string(participant.participantID),
            "userIdentity": encodeIdentity(participant.identity),
            "type": .string(participant.role.rawValue),
            "permission": .string(participant.permission.rawValue),
            "acceptanceStatus": .string(participant.acceptanceStatus.rawValue),
        ]
        if participant.isApprovedRequester { o["isApprovedRequester"] = .bool(true) }
        if let added = participant.dateAddedToShare { o["dateAddedToShare"] = .int(added) }
        return .object(o)
    }

    /// A user identity dictionary: `userRecordName` (when the person has an account),
    /// `nameComponents`, `lookupInfo`, and Tandem's `hasiCloudAccount` and `avatarURL` (when set).
    public static func encodeIdentity(_ identity: UserIdentity) -> JSONValue {
        var names = JSONObject()
        if let given = identity.givenName { names["givenName"] = .string(given) }
        if let family = identity.familyName { names["familyName"] = .string(family) }
        var o = JSONObject()
        if let name = identity.userRecordName { o["userRecordName"] = .string(name) }
        o["nameComponents"] = .object(names)
        o["lookupInfo"] = encodeLookupInfo(identity)
        o["hasiCloudAccount"] = .bool(identity.hasAccount)
        if let avatar = identity.avatarURL { o["avatarURL"] = .string(avatar) }
        return .object(o)
    }

    public static func encodeLookupInfo(_ identity: UserIdentity) -> JSONValue {
        var lookup = JSONObject()
        if let email = identity.emailAddress { lookup["emailAddress"] = .string(email) }
        if let phone = identity.phoneNumber { lookup["phoneNumber"] = .string(phone) }
        if let name = identity.userRecordName { lookup["userRecordName"] = .string(name) }
        return .object(lookup)
    }

    private static func hostname(of url: String) -> String? {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return nil }
        let host = parts[2].prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }

    // MARK: Decoding

    /// Decodes a lookup info dictionary: at least one of `emailAddress`, `phoneNumber`,
    /// `userRecordName` (a participant sent back as fetched carries several; the user record
    /// name then decides who it is). Throws `BAD_REQUEST` naming `context`.
    public static func decodeLookupInfo(_ json: JSONValue?, context: String) throws(CloudKitError) -> UserIdentity {
        guard case .object(let o)? = json else { throw .badRequest("\(context) needs a lookupInfo dictionary") }
        var identity = UserIdentity()
        var count = 0
        if let email = o["emailAddress"], !email.isNull {
            guard let s = email.stringValue else { throw .badRequest("\(context): emailAddress must be a string") }
            guard s.utf8.count <= EmailAddresses.maximumLength else {
                throw .badRequest("\(context): emailAddress is longer than \(EmailAddresses.maximumLength) bytes")
            }
            guard EmailAddresses.isValid(s) else { throw .badRequest("\(context): emailAddress is not an email address") }
            identity.emailAddress = s
            count += 1
        }
        if let phone = o["phoneNumber"], !phone.isNull {
            guard let s = phone.stringValue, PhoneNumbers.isValid(s) else { throw .badRequest("\(context): phoneNumber is not a phone number") }
            identity.phoneNumber = s
            count += 1
        }
        if let name = o["userRecordName"], !name.isNull {
            guard let s = name.stringValue, !s.isEmpty else { throw .badRequest("\(context): userRecordName must be a string") }
            identity.userRecordName = s
            count += 1
        }
        guard count >= 1 else {
            throw .badRequest("\(context): lookupInfo needs an emailAddress, phoneNumber or userRecordName")
        }
        return identity
    }

    /// Decodes the share keys of a share record in a `records/modify` request.
    public static func decodeChanges(_ record: JSONObject, context: String) throws(CloudKitError) -> Changes {
        var changes = Changes()
        if let p = record["publicPermission"], !p.isNull {
            guard let s = p.stringValue, let permission = Share.Permission(rawValue: s), permission != .unknown else {
                throw .badRequest("\(context): publicPermission must be NONE, READ_ONLY or READ_WRITE")
            }
            changes.publicPermission = permission
        }
        if let a = record["allowsAccessRequests"], !a.isNull {
            guard let b = a.boolValue else { throw .badRequest("\(context): allowsAccessRequests must be true or false") }
            changes.allowsAccessRequests = b
        }
        if let options = record["allowedSharingOptions"], !options.isNull {
            changes.allowedSharingOptions = try AllowedSharingOptions(json: options, context: context)
        }
        if let list = record["participants"], !list.isNull {
            guard case .array(let items) = list else { throw .badRequest("\(context): participants must be an array") }
            var requests: [ParticipantRequest] = []
            for (index, item) in items.enumerated() {
                requests.append(try decodeParticipant(item, context: "\(context).participants[\(index)]"))
            }
            changes.participants = requests
        }
        return changes
    }

    static func decodeParticipant(_ json: JSONValue, context: String) throws(CloudKitError) -> ParticipantRequest {
        guard case .object(let o) = json else { throw .badRequest("\(context) must be a dictionary") }
        var request = ParticipantRequest(lookup: UserIdentity())
        if let id = o["participantId"], !id.isNull {
            guard let s = id.stringValue else { throw .badRequest("\(context): participantId must be a string") }
            request.participantID = s
        }
        let lookupJSON = o["userIdentity"]?["lookupInfo"] ?? o["lookupInfo"]
        if lookupJSON != nil || request.participantID == nil {
            request.lookup = try decodeLookupInfo(lookupJSON, context: context)
        }
        if let t = o["type"] ?? o["role"], !t.isNull {
            guard let s = t.stringValue, let role = Share.Role(rawValue: s), role != .unknown else {
                throw .badRequest("\(context): type must be OWNER, ADMINISTRATOR, USER or PUBLIC_USER")
            }
            request.role = role
        }
        if let p = o["permission"], !p.isNull {
            guard let s = p.stringValue, let permission = Share.Permission(rawValue: s), permission == .readOnly || permission == .readWrite else {
                throw .badRequest("\(context): a participant's permission must be READ_ONLY or READ_WRITE")
            }
            request.permission = permission
        }
        return request
    }
}
