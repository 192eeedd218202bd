import TandemCore
import TandemHTTP
import TandemStore

/// Who may call each accounts operation, checked from the request's head before any body byte
/// is read, and how large its body may be (decisions A7, A39, A40).
extension AccountRoutes {
    /// The credential an operation needs.
    enum Credential {
        /// The container's API token (`ckAPIToken`): the app, for a person not signed in yet.
        case apiToken
        /// A person's user token (Bearer or `ckWebAuthToken`).
        case userToken
    }

    /// Every operation and its credential (A7).
    static let credentials: [String: Credential] = [
        "signup": .apiToken, "verify": .apiToken, "password/reset": .apiToken, "password/set": .apiToken, "signin": .apiToken,
        "token/exchange": .apiToken,
        "signout": .userToken, "account": .userToken, "sessions": .userToken, "sessions/revoke": .userToken, "account/delete": .userToken,
        "account/avatar": .userToken, "account/avatar/remove": .userToken,
    ]

    /// Operations whose `POST` needs no body: one sent without `content-length` (as
    /// `curl -X POST` does) is taken as empty rather than answered 411 (A40). `account/delete`
    /// needs a password only from accounts that have one.
    static let bodiless: Set<String> = ["signout", "account/delete", "account/avatar/remove"]

    /// The largest body of an accounts request, in bytes: their fields are an email, a password
    /// (≤ 1024 bytes, A3), a name, an ID token (≤ 16 KiB, `CompactJWS.maximumBytes`), so 64 KiB
    /// holds any real one. The same bound applies to the sign-in page's forms (A39).
    static let bodyBytes = 64 << 10

    /// The caller of an accounts request, as its credential proves it.
    enum Caller {
        /// The app, by its API token of the container.
        case app(TokenGrant)
        /// A signed-in person: the token they presented and their account.
        case person(token: String, user: UserAccount)
    }

    /// `(container, operation)` of an accounts path, or nil when it is not `/auth/1/{c}/{op…}`.
    static func address(_ path: String) -> (container: String, operation: String)? {
        guard path.hasPrefix(prefix) else { return nil }
        let segments = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard segments.count >= 2 else { return nil }
        return (segments[0], segments[1...].joined(separator: "/"))
    }

    /// Checks the credential `operation` needs from the head alone (query and `Authorization`).
    /// - Throws: `NOT_FOUND` for an unknown operation; `AUTHENTICATION_FAILED` for a missing or
    ///   foreign API token, or a user token that is not valid here; `AUTHENTICATION_REQUIRED` when
    ///   a user token is needed and none was sent.
    static func caller(_ context: RequestContext, _ services: Services, container: String, operation: String) throws -> Caller {
        switch credentials[operation] {
        case .apiToken?:
            return .app(try app(context, services, container: container))
        case .userToken?:
            let (token, user) = try signedIn(context, services, container: container)
            return .person(token: token, user: user)
        case nil:
            throw CloudKitError(.notFound, "unknown operation '\(operation)'")
        }
    }

    /// How an accounts request's body is received: at most `bodyBytes`, admitted only once its
    /// credential is checked (`admission`), empty when a bodiless operation sends no length.
    static func bodyPolicy(_ head: HTTPRequestHead) -> HTTPBodyPolicy {
        let operation = address(head.path)?.operation ?? ""
        return HTTPBodyPolicy(limit: bodyBytes, admitFirst: true, requiresLength: !bodiless.contains(operation))
    }

    /// The admission of an accounts request's body (`BodyAdmission`): the route's own credential
    /// check, made from the head, so a refused sender's body is never read. The body is charged to
    /// the person, or for the app's operations (a person not signed in yet) to the client's address.
    static func admission(_ head: HTTPRequestHead, _ services: Services) throws -> BodyAdmission.Decision {
        guard let (container, operation) = address(head.path) else {
            throw CloudKitError(.notFound, "expected /auth/1/{container}/{operation}")
        }
        let context = RequestContext(request: HTTPRequest(head: head), publicURL: services.publicURL)
        switch try caller(context, services, container: container, operation: operation) {
        case .app: return .admitted(holder: nil)
        case .person(_, let user): return .admitted(holder: "user " + user.recordName)
        }
    }
}
