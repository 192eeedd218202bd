import TandemCore
import TandemHTTP
import TandemStore

/// users/current and users/caller (CloudKit Web Services; database segment `public`).
enum UserRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "users/current", method: "GET", databases: [.public, .private],
                          summary: "The caller's user record name and name", requestSchema: nil, responseSchema: "User") { context in
                let user = context.user!
                var o: JSONObject = ["userRecordName": .string(user.recordName)]
                if let given = user.givenName { o["firstName"] = .string(given) }
                if let family = user.familyName { o["lastName"] = .string(family) }
                return Responses.json(.object(o))
            },
            DatabaseRoute(operation: "users/caller", method: "GET", databases: [.public, .private],
                          summary: "The caller's user identity", requestSchema: nil, responseSchema: "UserIdentities") { context in
                Responses.json(.object(["users": .array([identity(context.user!)])]))
            },
        ]
    }

    /// A user identity dictionary: `userRecordName`, `nameComponents`, `lookupInfo`.
    static func identity(_ user: UserAccount) -> JSONValue {
        var names = JSONObject()
        if let given = user.givenName { names["givenName"] = .string(given) }
        if let family = user.familyName { names["familyName"] = .string(family) }
        var lookup: JSONObject = ["userRecordName": .string(user.recordName)]
        if let email = user.email { lookup["emailAddress"] = .string(email) }
        return .object(["userRecordName": .string(user.recordName), "nameComponents": .object(names), "lookupInfo": .object(lookup)])
    }
}
