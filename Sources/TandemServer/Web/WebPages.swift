import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Pages for browsers under `/share/`: the share page and its forms (`SharePage`), its
/// thumbnail and assets; activity invitations under `/activity/` (`ActivityInvitationPage`); and the server's own `/.well-known/apple-app-site-association` so apps
/// can open share URLs as universal links.
struct WebPages: Sendable {
    let services: Services

    /// The response for a browser path, or nil when the path is not a page.
    func respond(_ context: inout RequestContext) throws -> HTTPResponse? {
        let path = context.request.head.path
        let method = context.request.head.method
        if path == "/.well-known/apple-app-site-association" {
            return Responses.json(associationFile())
        }
        if path.hasPrefix(ActivityInvitations.pagePrefix) {
            guard method == "GET" || method == "HEAD" else { throw MethodNotAllowed(allowed: "GET") }
            return try ActivityInvitationPage(services: services).respond(context, token: String(path.dropFirst(ActivityInvitations.pagePrefix.count)))
        }
        guard path.hasPrefix(SharePage.prefix) else { return nil }
        let rest = path.dropFirst(SharePage.prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if rest.count == 1 && (rest[0] == "share.css" || rest[0] == "share.js") {
            guard method == "GET" || method == "HEAD" else { throw MethodNotAllowed(allowed: "GET") }
            return rest[0] == "share.css" ? SharePage.asset(ShareAssets.stylesheet, type: "text/css")
                : SharePage.asset(ShareAssets.script, type: "text/javascript")
        }
        let guid = rest[0]
        if rest.count == 2 && rest[1] == "thumbnail" {
            guard method == "GET" || method == "HEAD" else { throw MethodNotAllowed(allowed: "GET") }
            let found = ShareTokens.isWellFormed(guid) ? try services.store.read { try $0.share(shortGUID: guid) } : nil
            return try thumbnail(found, context)
        }
        guard rest.count <= 2, !guid.isEmpty else { throw CloudKitError(.notFound, "no page at \(path)") }
        return try SharePage(services: services).respond(context, guid: guid, action: rest.count == 2 ? rest[1] : nil)
    }

    /// `applinks` for `/share/*` with the app IDs the server was configured with.
    func associationFile() -> JSONValue {
        let components: JSONValue = [["/": "/share/*", "comment": "Tandem share links"],
                                     ["/": "/activity/*", "comment": "Tandem activity invitations (R22)"]]
        return ["applinks": ["details": [["appIDs": .array(services.appIDs.map(JSONValue.string)), "components": components]]]]
    }

    /// The share's thumbnail to whom its page shows the title (D7, R5): anyone for a public
    /// share; for a private one the owner, participants and invitees, signed in with the page's
    /// cookie (never rotated here: an image cannot carry the new cookie back to the page).
    private func thumbnail(_ found: SharePage.Found?, _ context: RequestContext) throws -> HTTPResponse {
        let isPublic = found.map { $0.share.publicPermission == .readOnly || $0.share.publicPermission == .readWrite } ?? false
        var viewer: UserAccount?
        if let found, !isPublic, let token = ShareSession.token(context) {
            viewer = try? services.authenticator.signedIn(token: token, container: found.container, rotating: false).user
        }
        guard let found,
              try services.store.read({ try SharePageView.read($0, found.share, viewer: viewer) }).hasThumbnail,
              case .bytes(let bytes)? = try services.store.read({ try $0.record(zone: found.share.zone, name: found.share.recordName) })?
                .fields["cloudkit.thumbnailImageData"] else {
            throw CloudKitError(.notFound, "no thumbnail")
        }
        return HTTPResponse(status: 200, headers: [("content-type", ImageTypes.sniff(bytes)),
                                                   ("cache-control", isPublic ? "public, max-age=300" : "private, no-store")]
                            + Self.untrustedBytesHeaders, body: bytes)
    }

    /// Headers for bytes someone else saved (a share's thumbnail, any `cloudkit.thumbnailImageData`;
    /// a record's asset, C64): never sniffed into another type, and opened on their own they run
    /// nothing and frame nothing (C33). An `<img>` ignores them.
    static let untrustedBytesHeaders: [(String, String)] = [
        ("x-content-type-options", "nosniff"), ("content-security-policy", "default-src 'none'; frame-ancestors 'none'; sandbox"),
    ]
}

/// Image content types by their first bytes (PNG, JPEG, GIF, WebP; otherwise octet-stream).
enum ImageTypes {
    static func sniff(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if bytes.count > 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return "application/octet-stream"
    }
}
