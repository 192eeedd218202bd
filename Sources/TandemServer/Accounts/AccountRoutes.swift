import TandemCore
import TandemHTTP
import TandemStore

/// The accounts JSON API under `/auth/1/{container}/` (Tandem's own; CloudKit Web Services has
/// none): for command-line and server apps, and the scripts a web page runs.
///
/// | Operation | Method | Credentials | Body → answer |
/// |---|---|---|---|
/// | `signup` | POST | `ckAPIToken` | `{email, password, name?}` → `{status: "CHECK_EMAIL"}`, the same for a known email |
/// | `verify` | POST | `ckAPIToken` | `{token}` (from the emailed link) → the account; an expired or used link is `AUTHENTICATION_FAILED` with `tandemReason` `LINK_EXPIRED` / `LINK_USED` (A46) |
/// | `password/reset` | POST | `ckAPIToken` | `{email}` → `{status: "CHECK_EMAIL"}`, the same for an unknown email |
/// | `password/set` | POST | `ckAPIToken` | `{token, password}` (from the emailed link) → the account; every session is revoked; link refusals as `verify` |
/// | `signin` | POST | `ckAPIToken` | `{email, password, consent?, device?}` → `{ckWebAuthToken, userRecordName, sessionID, expiresAt}` |
/// | `token/exchange` | POST | `ckAPIToken` | `{idToken, device?}` (a trusted issuer's ID token) → as `signin` (`TokenExchange`) |
/// | `signout` | POST | user token | no body (or any) → `{revoked: 1}`: the presented token stops working |
/// | `account` | GET | user token | → `{userRecordName, email, emailVerified, displayName, invitationEmails, avatarURL?}` |
/// | `account` | POST | user token | `{invitationEmails: false}` (or `true`) → the account: share invitation emails off or on (A31); `{givenName, familyName}` (strings ≤ 100 characters, `null` clears) → the name others see (R31) |
/// | `account/avatar` | POST | user token | the picture's bytes (`image/png`, `image/jpeg`, `image/webp`, ≤ 1 MiB) → the account with `avatarURL` (A48) |
/// | `account/avatar/remove` | POST | user token | → the account without `avatarURL` |
/// | `sessions` | GET | user token | → `{sessions: [{sessionID, device, createdAt, lastUsedAt, expiresAt, current}]}` |
/// | `sessions/revoke` | POST | user token | `{sessionID}` or `{all: true}` → `{revoked: N}` |
/// | `account/delete` | POST | user token | `{password}` (or, without a password, no body and a sign-in in the last 10 minutes) → `{deleted: true, zonesDeleted, recordsDeleted, sharesStopped, participationsEnded, sessionsRevoked, serverKeysRevoked}` (A15, A43) |
///
/// The credential is checked from the request's head before its body is read, and bodies are at
/// most 64 KiB (`AccountRoutes+Callers`; decisions A39).
///
/// A first sign-in to a container without `consent: true` is `ACCESS_DENIED` with `tandemReason`
/// `CONSENT_REQUIRED` (nothing issued; decisions A35);
/// rate limits answer `THROTTLED` with `retryAfter` (decisions A2, A5).
enum AccountRoutes {
    static let prefix = "/auth/1/"

    /// The response for an accounts path, or nil when the path is not one. `endpoint` names the
    /// operation for metrics.
    static func respond(_ context: RequestContext, _ services: Services, endpoint: inout String) throws -> HTTPResponse? {
        let path = context.request.head.path
        if path == "/signin" || path.hasPrefix("/signin/") {
            endpoint = "signin"
            return try SignInPage(services: services).respond(context)
        }
        guard path.hasPrefix(prefix) else { return nil }
        guard let (container, operation) = address(path) else { throw CloudKitError(.notFound, "expected /auth/1/{container}/{operation}") }
        endpoint = "auth/" + operation
        let method = context.request.head.method
        let accounts = services.accounts
        func require(_ allowed: String) throws {
            guard method == allowed else { throw MethodNotAllowed(allowed: allowed) }
        }
        // The credential first, the body after (A39): the same check admitted the body from the head.
        let caller = try self.caller(context, services, container: container, operation: operation)
        let person: (token: String, user: UserAccount)? = if case .person(let token, let user) = caller { (token, user) } else { nil }
        switch operation {
        case "signup":
            try require("POST")
            let body = try context.jsonBody()
            let apiToken = context.parameters["ckAPIToken"] ?? ""
            try accounts.signUp(email: try string(body, "email", required: true) ?? "", password: try string(body, "password", required: true),
                                displayName: try string(body, "name"), address: context.request.head.remoteAddress,
                                linkBase: context.mailLinkBaseURL.map { $0 + "/signin/verify?ckAPIToken=" + SignInHTML.percent(apiToken) })
            return Responses.json(["status": "CHECK_EMAIL"])
        case "password/reset":
            try require("POST")
            let body = try context.jsonBody()
            let apiToken = context.parameters["ckAPIToken"] ?? ""
            try accounts.requestReset(email: try string(body, "email", required: true) ?? "", address: context.request.head.remoteAddress,
                                      linkBase: context.mailLinkBaseURL.map { $0 + "/signin/password?ckAPIToken=" + SignInHTML.percent(apiToken) })
            return Responses.json(["status": "CHECK_EMAIL"])
        case "password/set":
            try require("POST")
            let body = try context.jsonBody()
            let profile = try accounts.followResetLink(try string(body, "token", required: true) ?? "", password: try string(body, "password", required: true))
            return Responses.json(json(profile))
        case "verify":
            try require("POST")
            let body = try context.jsonBody()
            let profile = try accounts.followSignUpLink(try string(body, "token", required: true) ?? "")
            return Responses.json(json(profile))
        case "signin":
            try require("POST")
            let body = try context.jsonBody()
            var credential: [String: String] = [:]
            for key in ["email", "password"] { credential[key] = try string(body, key, required: true) }
            let consent: Bool
            switch body["consent"] {
            case nil: consent = false
            case .bool(let value)?: consent = value
            default: throw CloudKitError.badRequest("'consent' must be true or false")
            }
            do {
                let session = try accounts.signIn(with: accounts.password, credential: credential, container: container, consent: consent,
                                                  device: try string(body, "device"), address: context.request.head.remoteAddress)
                return Responses.json(["ckWebAuthToken": .string(session.token), "userRecordName": .string(session.user.recordName),
                                       "sessionID": .string(session.id), "expiresAt": .int(session.expiresAt)])
            } catch is AccountService.ConsentRequired {
                var error = CloudKitError(.accessDenied, "first sign-in to '\(container)': ask the person, then send \"consent\": true to let this app use their account")
                error.tandemReason = "CONSENT_REQUIRED"
                throw error
            }
        case "token/exchange":
            try require("POST")
            return try TokenExchange.respond(context, services, container: container)
        case "signout":
            try require("POST")
            guard let person else { throw CloudKitError(.internalError, "signout without a person") }
            try accounts.signOut(token: person.token)
            return Responses.json(["revoked": 1])
        case "account":
            guard method == "GET" || method == "POST" else { throw MethodNotAllowed(allowed: "GET, POST") }
            guard let person else { throw CloudKitError(.internalError, "account without a person") }
            let body = method == "POST" ? try context.jsonBody() : [:]
            return Responses.json(try AccountSettingsRoute.apply(body, user: person.user.recordName, context, services))
        case "account/avatar":
            try require("POST")
            guard let person else { throw CloudKitError(.internalError, "account/avatar without a person") }
            return Responses.json(try AvatarRoutes(services: services).set(context, user: person.user.recordName))
        case "account/avatar/remove":
            try require("POST")
            guard let person else { throw CloudKitError(.internalError, "account/avatar/remove without a person") }
            return Responses.json(try AvatarRoutes(services: services).remove(context, user: person.user.recordName))
        case "sessions":
            try require("GET")
            guard let person else { throw CloudKitError(.internalError, "sessions without a person") }
            let current = Sessions.id(Tokens.hash(person.token))
            let sessions = try services.store.read { try $0.sessions(user: person.user.recordName) }
            return Responses.json(["sessions": .array(sessions.map { json($0, current: current) })])
        case "sessions/revoke":
            try require("POST")
            guard let person else { throw CloudKitError(.internalError, "sessions/revoke without a person") }
            let body = try context.jsonBody()
            let id = try string(body, "sessionID")
            let all = body["all"] == .bool(true)
            guard (id == nil) == all else { throw CloudKitError.badRequest("send either 'sessionID' or \"all\": true") }
            if let id, id.count != 16 || !id.allSatisfy(\.isHexDigit) {
                throw CloudKitError.badRequest("'sessionID' is 16 hex digits (from the sessions list)")
            }
            let count = try accounts.revoke(user: person.user.recordName, session: id)
            if id != nil && count == 0 { throw CloudKitError(.notFound, "no session '\(id!)' of yours") }
            return Responses.json(["revoked": .int(Int64(count))])
        case "account/delete":
            try require("POST")
            guard let person else { throw CloudKitError(.internalError, "account/delete without a person") }
            // No body at all is no password (an account without one; A40).
            let body = context.request.body.isEmpty ? [:] : try context.jsonBody()
            let report = try accounts.deleteAccount(user: person.user.recordName, presentedToken: person.token, password: try string(body, "password"),
                                                    address: context.request.head.remoteAddress, deletion: services.deletion)
            guard case .object(var answer) = report.json else { throw CloudKitError(.internalError, "the report is not an object") }
            answer["deleted"] = true
            return Responses.json(.object(answer))
        default:
            throw CloudKitError(.notFound, "unknown operation '\(operation)'")
        }
    }

    /// The container's API token from `ckAPIToken`, checked (the container must exist).
    /// - Throws: `AUTHENTICATION_FAILED` when missing or not an API token of `container`.
    static func app(_ context: RequestContext, _ services: Services, container: String) throws -> TokenGrant {
        guard let token = context.parameters["ckAPIToken"], let grant = try services.authenticator.apiGrant(token, container: container) else {
            throw CloudKitError(.authenticationFailed, "send the app's API token of container '\(container)' as ckAPIToken")
        }
        return grant
    }

    /// The presented user token and its user in `container`.
    static func signedIn(_ context: RequestContext, _ services: Services, container: String) throws -> (String, UserAccount) {
        let headers = context.request.head.headers["authorization"]
        guard let token = Authenticator.presentedUserToken(authorization: headers, parameters: context.parameters), !token.isEmpty else {
            throw CloudKitError(.authenticationRequired, "sign in first: send 'Authorization: Bearer <token>' or ckWebAuthToken")
        }
        return (token, try services.authenticator.user(token: token, container: container))
    }

    static func string(_ body: JSONObject, _ key: String, required: Bool = false) throws -> String? {
        switch body[key] {
        case .string(let value)?: return value
        case nil, .null?:
            if required { throw CloudKitError.badRequest("'\(key)' is required") }
            return nil
        default: throw CloudKitError.badRequest("'\(key)' must be a string")
        }
    }

    static func json(_ profile: AccountProfile) -> JSONValue {
        var o: JSONObject = ["userRecordName": .string(profile.recordName), "emailVerified": .bool(profile.emailVerified),
                             "createdAt": .int(profile.createdAt)]
        if let email = profile.email { o["email"] = .string(email) }
        if let name = profile.displayName { o["displayName"] = .string(name) }
        return .object(o)
    }

    static func json(_ session: StoredSession, current: String) -> JSONValue {
        var o: JSONObject = ["sessionID": .string(session.id), "createdAt": .int(session.createdAt), "current": .bool(session.id == current)]
        if let container = session.container { o["container"] = .string(container) }
        if let device = session.session.device { o["device"] = .string(device) }
        o["lastUsedAt"] = .int(session.session.lastUsedAt ?? session.createdAt)
        if let expires = session.session.expiresAt { o["expiresAt"] = .int(expires) }
        return .object(o)
    }
}
