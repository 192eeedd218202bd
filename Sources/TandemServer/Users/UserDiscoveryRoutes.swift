import TandemCore
import TandemHTTP
import TandemStore

/// Finding people (CloudKit Web Services: users/discover GET and POST, users/lookup/email,
/// users/lookup/id, users/lookup/contacts; cloudkit.md §2.10) and choosing whether one can be found (a Tandem route).
///
/// Only discoverable users are found by email or phone. `users/lookup/id` answers for any user
/// record name (it is not contact data) but gives names only for discoverable users. GET
/// `users/discover` lists the discoverable people the caller shares with: Tandem has no address
/// book, and the people on one's shares are the contacts a sharing app knows.
enum UserDiscoveryRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "users/discover", method: "GET", databases: [.public],
                          summary: "Discoverable people the caller shares with", requestSchema: nil, responseSchema: "UserIdentities") { context in
                let scope = context.scope
                let users = try services.store.read {
                    try $0.sharingPartners(of: scope.user, container: scope.database.container, environment: scope.database.environment)
                }
                let reader = scope.user
                return Responses.json(.object(["users": .array(users.filter(\.discoverable).map { user in
                    var identity = user.identity
                    identity.avatarURL = AvatarRoutes.visibleURL(of: user, reader: reader, base: context.baseURL, signer: context.assetSigner)
                    return ShareCodec.encodeIdentity(identity)
                })]))
            },
            DatabaseRoute(operation: "users/discover", method: "POST", databases: [.public],
                          summary: "Find discoverable people by lookup info (email, phone or user record name)",
                          requestSchema: "LookupInfosRequest", responseSchema: "UserIdentities") { context in
                let body = try context.jsonBody()
                let items = try RequestContext.items(body, "lookupInfos", limit: Limits.resultsPerResponse,
                                                     needed: "users/discover needs 'lookupInfos', an array of lookup info dictionaries")
                var lookups: [UserIdentity] = []
                for (index, item) in items.enumerated() {
                    lookups.append(try ShareCodec.decodeLookupInfo(item, context: "lookupInfos[\(index)]"))
                }
                let found = try services.store.read { reader in try lookups.map { try reader.user(matching: $0) } }
                let users: [JSONValue] = zip(lookups, found).compactMap { lookup, user in
                    guard let user, user.discoverable || lookup.userRecordName != nil else { return nil }
                    var identity = user.discoverable ? user.identity : UserIdentity(userRecordName: user.recordName)
                    // Give back only the contact detail the caller already had.
                    identity.emailAddress = lookup.emailAddress
                    identity.phoneNumber = lookup.phoneNumber
                    identity.avatarURL = AvatarRoutes.visibleURL(of: user, reader: context.scope.user, base: context.baseURL,
                                                                 signer: context.assetSigner)
                    return ShareCodec.encodeIdentity(identity)
                }
                return Responses.json(.object(["users": .array(users)]))
            },
            DatabaseRoute(operation: "users/lookup/email", method: "POST", databases: [.public],
                          summary: "Find discoverable users by email address", requestSchema: "UsersLookupRequest",
                          responseSchema: "Users") { context in
                let emails = try keys(try context.jsonBody(), "emailAddress")
                let found = try services.store.read { reader in try emails.map { try reader.user(matching: UserIdentity(emailAddress: $0)) } }
                let users: [JSONValue] = zip(emails, found).compactMap { email, user in
                    guard let user, user.discoverable else { return nil }
                    var o = userDictionary(user, context)
                    o["emailAddress"] = .string(email)
                    return .object(o)
                }
                return Responses.json(.object(["users": .array(users)]))
            },
            DatabaseRoute(operation: "users/lookup/id", method: "POST", databases: [.public],
                          summary: "Users by user record name", requestSchema: "UsersLookupRequest", responseSchema: "Users") { context in
                let names = try keys(try context.jsonBody(), "userRecordName")
                let found = try services.store.read { reader in try names.map { try reader.user(matching: UserIdentity(userRecordName: $0)) } }
                let users: [JSONValue] = found.compactMap { user in
                    guard let user else { return nil }
                    return .object(user.discoverable ? userDictionary(user, context) : ["userRecordName": .string(user.recordName)])
                }
                return Responses.json(.object(["users": .array(users)]))
            },
            // CloudKit Web Services documents users/lookup/contacts (the caller's address book
            // matched against discoverable users); Tandem keeps no contacts, so nobody is found
            // (decision J12). The body is still checked, as the documented request has it.
            DatabaseRoute(operation: "users/lookup/contacts", method: "POST", databases: [.public],
                          summary: "Users among the caller's contacts: always none (Tandem keeps no contacts)",
                          requestSchema: "ContactsLookupRequest", responseSchema: "Users") { context in
                let body = try context.jsonBody()
                if let contacts = body["contacts"], contacts.arrayValue == nil {
                    throw CloudKitError.badRequest("users/lookup/contacts: 'contacts' must be an array")
                }
                return Responses.json(.object(["users": .array([])]))
            },
        ]
    }

    static func tandemRoutes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "users/discoverability", method: "POST", databases: [],
                          summary: "Choose whether others can find you by email or phone ({\"discoverable\": true})",
                          requestSchema: "DiscoverabilityRequest", responseSchema: "UserIdentities") { context in
                guard let discoverable = try context.jsonBody()["discoverable"]?.boolValue else {
                    throw CloudKitError.badRequest("send {\"discoverable\": true} or {\"discoverable\": false}")
                }
                let user = context.user!
                try services.store.write { try $0.setDiscoverable(user: user.recordName, discoverable) }
                var identity = ShareCodec.encodeIdentity(user.identity).objectValue ?? JSONObject()
                identity["discoverable"] = .bool(discoverable)
                return Responses.json(.object(["users": .array([.object(identity)])]))
            },
        ]
    }

    /// The `users[]` strings under `key` of a users/lookup request.
    static func keys(_ body: JSONObject, _ key: String) throws -> [String] {
        let items = try RequestContext.items(body, "users", limit: Limits.resultsPerResponse, needed: "needs 'users', an array of {\(key)}")
        return try items.enumerated().map { index, item in
            guard let value = item[key]?.stringValue, !value.isEmpty else { throw CloudKitError.badRequest("users[\(index)] needs '\(key)'") }
            return value
        }
    }

    /// A User dictionary: `userRecordName`, `firstName`, `lastName`, and Tandem's `avatarURL`
    /// (signed for the caller) when the person set a picture and may be seen (A48).
    static func userDictionary(_ user: UserAccount, _ context: RequestContext) -> JSONObject {
        var o: JSONObject = ["userRecordName": .string(user.recordName)]
        if let given = user.givenName { o["firstName"] = .string(given) }
        if let family = user.familyName { o["lastName"] = .string(family) }
        if let avatar = AvatarRoutes.visibleURL(of: user, reader: context.scope.user, base: context.baseURL, signer: context.assetSigner) {
            o["avatarURL"] = .string(avatar)
        }
        return o
    }
}
