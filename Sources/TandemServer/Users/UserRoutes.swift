import TandemCore
import TandemHTTP
import TandemStore

/// users/current and users/caller (CloudKit Web Services; database segment `public`).
///
/// Both answer the caller's identity at the top level (`userRecordName`, `nameComponents`,
/// `lookupInfo`): CloudKit JS's `fetchCurrentUserIdentity()` (behind `setUpAuth()` and
/// `whenUserSignsIn()`) hands the response body itself to the app as the `UserIdentity`.
/// users/current also keeps `firstName`/`lastName`, and users/caller a `users` array holding the
/// same identity, for clients written against either older shape.
enum UserRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "users/current", method: "GET", databases: [.public, .private],
                          summary: "The caller's user record name and name", requestSchema: nil, responseSchema: "User") { context in
                let user = context.user!
                var o = identityObject(user, context)
                if let given = user.givenName { o["firstName"] = .string(given) }
                if let family = user.familyName { o["lastName"] = .string(family) }
                return Responses.json(.object(o))
            },
            DatabaseRoute(operation: "users/caller", method: "GET", databases: [.public, .private],
                          summary: "The caller's user identity", requestSchema: nil, responseSchema: "UserIdentities") { context in
                var o = identityObject(context.user!, context)
                o["users"] = .array([.object(identityObject(context.user!, context))])
                return Responses.json(.object(o))
            },
        ]
    }

    /// The caller's identity dictionary: `userRecordName`, `nameComponents`, `lookupInfo`, and
    /// Tandem's `avatarURL` (signed for the caller) when they set a picture (A48).
    static func identityObject(_ user: UserAccount, _ context: RequestContext) -> JSONObject {
        var names = JSONObject()
        if let given = user.givenName { names["givenName"] = .string(given) }
        if let family = user.familyName { names["familyName"] = .string(family) }
        var lookup: JSONObject = ["userRecordName": .string(user.recordName)]
        if let email = user.email { lookup["emailAddress"] = .string(email) }
        var o: JSONObject = ["userRecordName": .string(user.recordName), "nameComponents": .object(names), "lookupInfo": .object(lookup)]
        if let avatar = AvatarRoutes.url(of: user, reader: user.recordName, base: context.baseURL, signer: context.assetSigner) {
            o["avatarURL"] = .string(avatar)
        }
        return o
    }
}
