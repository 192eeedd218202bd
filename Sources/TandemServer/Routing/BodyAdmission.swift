import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Which request bodies the server takes, and from whom, decided from the head before any
/// body byte is accepted (DESIGN.md §3; docs/decisions.md E2).
///
/// - JSON bodies, and any method but `POST` on the upload paths: at most 2 MiB, in memory, no
///   admission step (the handler authenticates, or answers 405).
/// - Asset uploads (`POST /upload/1/{token}`, up to 50 MiB) and journal attachments (up to
///   100 MiB): spooled to a file under the data directory, and admitted first: the upload URL
///   must name an open upload (else 404), a journal upload needs valid credentials (else 401)
///   and a joined participant (else 404); an over-long `content-length` is 413.
/// - Requests signed with a server-to-server key (decisions J8): at most 2 MiB, in memory, and
///   admitted first: the headers, the date, the key (known, not revoked, of the container) and
///   the database are checked from the head (else 401); the signature, which covers the body's
///   hash, is checked once the body is read.
/// - Preview images (1 MiB) are admitted like journal uploads, then read into memory; so are
///   avatars (`POST /auth/1/{container}/account/avatar`, 1 MiB; decisions A48): the user token is
///   authenticated from the head (else 421 or 401) and an over-long `content-length` is 413.
/// - JSON bodies of routes that need credentials (`/database/1/`, `/device/1/`, `/tandem/1/`)
///   are admitted first too: the user (or for schemas and links the admin token) is
///   authenticated from the head, so a missing credential is 421 and a bad one 401 before a
///   body byte is read. Public-database operations open to anyone are admitted without one;
///   a head naming a server-to-server key (`X-Apple-CloudKit-Request-KeyID`) is admitted to
///   the bounded path, its signature checked once the body is read.
///
/// - Accounts requests (`/auth/1/`): at most 64 KiB, admitted first: the operation's credential
///   (the app's API token, or a user token) is checked from the head exactly as the route checks
///   it (`AccountRoutes.caller`); the sign-in page's forms (`/signin…`), whose senders are not
///   signed in, at most 64 KiB and charged to the client's address (decisions A39).
///
/// An admitted body is charged to a holder (`HTTPAdmission.admitted`): the owner of the upload
/// URL, the signed-in user, else the client's address; one holder may have at most 4 spooled
/// and 16 MiB of in-memory bodies being received at once (decisions E2).
enum BodyAdmission {
    /// Paths whose JSON requests need credentials, checked from the head (`credentialRefusal`).
    static let databasePrefix = "/database/1/"
    static let credentialedPrefixes = [databasePrefix, APIRouter.devicePrefix, "/tandem/1/"]

    static func policy(for head: HTTPRequestHead) -> HTTPBodyPolicy {
        // A browser's CORS preflight carries no credentials and no body (J10).
        if head.method == "OPTIONS" { return HTTPBodyPolicy(limit: 0) }
        if credentialedPrefixes.contains(where: head.path.hasPrefix) {
            // A schema promote has no body: `curl -X POST` sends no length, which is an empty body
            // there, as for signout (A40, F44), instead of 411.
            return HTTPBodyPolicy(limit: Limits.jsonBodyBytes, admitFirst: true, requiresLength: !SchemaRoutes.isPromote(head))
        }
        // Avatars are accounts paths with a picture's body (A48): their own, larger bound.
        if AvatarRoutes.isUpload(head) { return HTTPBodyPolicy(limit: AvatarImage.maximumBytes + 1, admitFirst: true) }
        if head.path.hasPrefix(AccountRoutes.prefix) { return AccountRoutes.bodyPolicy(head) }
        // The sign-in page's forms come from people not signed in: small bodies only (A39).
        if head.path == "/signin" || head.path.hasPrefix("/signin/") { return HTTPBodyPolicy(limit: AccountRoutes.bodyBytes) }
        if head.path.hasPrefix(AssetRoutes.uploadPrefix) && head.method == "POST" {
            return HTTPBodyPolicy(limit: Limits.assetBytes + 1, spooled: true, admitFirst: true)
        }
        if head.path.hasPrefix(JournalRoutes.prefix) && head.method == "POST" {
            if head.path.hasSuffix("/preview") { return HTTPBodyPolicy(limit: JournalRoutes.previewBytes + 1, admitFirst: true) }
            return HTTPBodyPolicy(limit: Limits.journalAttachmentBytes + 1, spooled: true, admitFirst: true)
        }
        // Console forms are small (decisions C5); their senders are known only once the cookie is read.
        if head.path.hasPrefix("/console/") {
            return HTTPBodyPolicy(limit: ConsolePage.isSchemaText(head.path) ? ConsolePage.schemaBodyBytes : ConsolePage.formBodyBytes)
        }
        // Share page forms are small (decisions C16); their senders are known only once the cookie is read.
        if head.path.hasPrefix(SharePage.prefix) { return HTTPBodyPolicy(limit: SharePage.formBodyBytes) }
        return HTTPBodyPolicy(limit: Limits.jsonBodyBytes)
    }

    /// An admitted body and its holder, or the CloudKit error that refuses it.
    enum Decision {
        case admitted(holder: String?)
        case refused(CloudKitError)
    }

    static func decide(_ head: HTTPRequestHead, _ services: Services) throws -> Decision {
        if credentialedPrefixes.contains(where: head.path.hasPrefix) {
            return try credentials(head, services)
        }
        var holder: String?
        if AvatarRoutes.isUpload(head) {
            if let refusal = try refusal(for: head, services, holder: &holder) { return .refused(refusal) }
            return .admitted(holder: holder)
        }
        if head.path.hasPrefix(AccountRoutes.prefix) { return try AccountRoutes.admission(head, services) }
        if let refusal = try refusal(for: head, services, holder: &holder) { return .refused(refusal) }
        return .admitted(holder: holder)
    }

    /// The JSON routes' check from the head: the same authentication the route makes once the
    /// body is read (`APIRouter.prepare`, `SchemaRoutes.authenticateAdmin`), so the answer
    /// is the same, only earlier.
    static func credentials(_ head: HTTPRequestHead, _ services: Services) throws -> Decision {
        // Server-to-server requests: the key is checked from the head; the signature covers the
        // body, so it is checked after it.
        if ServerKeySignature.isSigned(head) {
            guard let scope = ServerKeySignature.scope(of: head.path), let headers = try ServerKeySignature.headers(head) else {
                return .admitted(holder: nil)
            }
            let key = try ServerKeySignature.admit(headers, container: scope.container, database: scope.database, store: services.store)
            return .admitted(holder: "user " + key.userRecordName)
        }
        let context = RequestContext(request: HTTPRequest(head: head), publicURL: services.publicURL)
        let (prefix, segments) = credentialedRoute(head)
        if isAdminRoute(prefix, segments) {
            try SchemaRoutes.authenticateAdmin(context, services.store)
            return .admitted(holder: nil)
        }
        do {
            let user = try services.authenticator.user(headers: head.headers["authorization"], parameters: context.parameters,
                                                       container: segments.first ?? "", signInURL: context.baseURL + "/signin")
            return .admitted(holder: "user " + user.recordName)
        } catch let error as CloudKitError where allowsAnonymous(prefix, segments) && error.code == .authenticationRequired {
            return .admitted(holder: nil)
        }
    }

    /// `credentials` decided from memory on the HTTP service thread, which must not block
    /// (`HTTPResponder.quickAdmission`, decisions E22): a user whose grants the authenticator read
    /// less than 30 s ago (`Authenticator.userFromMemory`), or no credential at all on a
    /// public-database operation open to anyone. `nil` for everything else (signed requests, the
    /// admin routes, unknown or refused credentials, uploads, accounts): a worker decides those.
    /// It admits only what `decide` admits, to the same holder; it never refuses.
    static func quick(_ head: HTTPRequestHead, _ services: Services) -> Decision? {
        guard let prefix = credentialedPrefixes.first(where: head.path.hasPrefix), !ServerKeySignature.isSigned(head) else { return nil }
        // The whole path is split only where its later segments matter; a signed-in sender of a
        // database operation needs only the container (the split was 6,400 instructions of a
        // lookup's 239,000).
        guard prefix != "/tandem/1/" || !isAdminRoute(prefix, credentialedRoute(head).segments) else { return nil }
        let parameters = QueryString.parse(head.query)
        let authorization = head.headers["authorization"]
        if authorization == nil && parameters["ckAPIToken"] == nil && parameters["ckWebAuthToken"] == nil {
            return allowsAnonymous(prefix, credentialedRoute(head).segments) ? .admitted(holder: nil) : nil
        }
        let container = head.path.dropFirst(prefix.count).firstPathSegment
        guard let user = services.authenticator.userFromMemory(headers: authorization, parameters: parameters,
                                                               container: container) else { return nil }
        return .admitted(holder: "user " + user.recordName)
    }

    /// The credentialed prefix a head's path starts with and the path's segments after it.
    private static func credentialedRoute(_ head: HTTPRequestHead) -> (prefix: String, segments: [String]) {
        let prefix = credentialedPrefixes.first(where: head.path.hasPrefix)!
        return (prefix, head.path.dropFirst(prefix.count).pathSegments)
    }

    /// Schema and links routes, which take the admin token (`SchemaRoutes.authenticateAdmin`).
    private static func isAdminRoute(_ prefix: String, _ segments: [String]) -> Bool {
        prefix == "/tandem/1/" && segments.count == 4 && (segments[2] == "schema" || segments[2] == "links")
    }

    /// A public-database operation open to anyone (`PublicDatabase.allowsAnonymous`).
    private static func allowsAnonymous(_ prefix: String, _ segments: [String]) -> Bool {
        prefix == databasePrefix && segments.count >= 4
            && DatabaseType(rawValue: segments[2]).map { PublicDatabase.allowsAnonymous(segments[3...].joined(separator: "/"), database: $0) } == true
    }

    /// Uploads: `nil` when the body may be read (`holder`: who it is charged to); otherwise
    /// the CloudKit error that refuses it.
    static func refusal(for head: HTTPRequestHead, _ services: Services, holder: inout String?) throws -> CloudKitError? {
        let length = Int(head.headers["content-length"] ?? "") ?? 0
        if head.path.hasPrefix(AssetRoutes.uploadPrefix) {
            guard head.method == "POST" else { return nil }
            if length > Limits.assetBytes {
                return CloudKitError(.limitExceeded, "an asset may be at most \(Limits.assetBytes) bytes (50 MiB)")
            }
            let token = String(head.path.dropFirst(AssetRoutes.uploadPrefix.count))
            guard let upload = try services.store.read({ try $0.assetUpload(token: token) }), upload.checksum == nil,
                  upload.expiresAt > Clock.milliseconds() else {
                return CloudKitError(.notFound, "no open upload at this URL (unknown, already used, or expired)")
            }
            holder = "user " + upload.owner
            return nil
        }
        if AvatarRoutes.isUpload(head) {
            let container = head.path.dropFirst(AccountRoutes.prefix.count).prefix { $0 != "/" }
            let context = RequestContext(request: HTTPRequest(head: head))
            let (_, user) = try AccountRoutes.signedIn(context, services, container: String(container))
            holder = "user " + user.recordName
            return length > AvatarImage.maximumBytes
                ? CloudKitError(.limitExceeded, "an avatar may be at most \(AvatarImage.maximumBytes) bytes (1 MiB); got \(length)") : nil
        }
        guard head.path.hasPrefix(JournalRoutes.prefix) else { return nil }
        let context = RequestContext(request: HTTPRequest(head: head))
        let parts = head.path.dropFirst(JournalRoutes.prefix.count).split(separator: "/").map(String.init)
        guard parts.count == 3, let environment = Environment(rawValue: parts[1]) else {
            return CloudKitError(.notFound, "expected /journal/1/{container}/{environment}/{sessionID}")
        }
        let user = try services.authenticator.user(headers: head.headers["authorization"], parameters: context.parameters,
                                                   container: parts[0], signInURL: "")
        holder = "user " + user.recordName
        if parts[2] == "preview" {
            return length > JournalRoutes.previewBytes
                ? CloudKitError(.limitExceeded, "a preview image has at most \(JournalRoutes.previewBytes) bytes (1 MiB); got \(length)") : nil
        }
        if length > Limits.journalAttachmentBytes {
            return CloudKitError(.limitExceeded, "a journal attachment has at most \(Limits.journalAttachmentBytes) bytes (100 MiB, D37); got \(length)")
        }
        guard let text = context.parameters["participantID"], let participant = UUID(uuidString: text) else {
            return .badRequest("journal uploads need ?participantID= (your participant in the session)")
        }
        guard let sessionID = UUID(uuidString: parts[2]),
              services.sessions.hasParticipant(participant, user: user.recordName, container: parts[0], environment: environment,
                                               sessionID: sessionID) else {
            return CloudKitError(.notFound, "you have not joined session '\(parts[2])' as that participant")
        }
        return nil
    }
}
