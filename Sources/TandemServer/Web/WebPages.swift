import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Pages for browsers: the share landing page `/share/{shortGUID}` (iCloud's share page role),
/// its thumbnail, and the server's own `/.well-known/apple-app-site-association` so apps can
/// open share URLs as universal links.
///
/// A stranger sees a share's title, thumbnail and owner only when the share is public; a
/// private share (or a token that names nothing) gets the same generic "ask the owner" page,
/// plus a request button when the owner allows access requests (decisions D7). A signed-in
/// participant (Bearer token or `ckWebAuthToken`) sees their share. A signed-out visitor gets a
/// "Sign in" link to `/signin?return=/share/{shortGUID}`, which comes back here with
/// `ckWebAuthToken` (A47); the page keeps that token for its buttons and drops it from the URL.
struct WebPages: Sendable {
    let services: Services

    /// The response for a browser path, or nil when the path is not a page.
    func respond(_ context: inout RequestContext) throws -> HTTPResponse? {
        let path = context.request.head.path
        if path == "/.well-known/apple-app-site-association" {
            return Responses.json(associationFile())
        }
        guard path.hasPrefix("/share/") else { return nil }
        guard context.request.head.method == "GET" || context.request.head.method == "HEAD" else {
            throw MethodNotAllowed(allowed: "GET")
        }
        let rest = path.dropFirst("/share/".count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let guid = rest[0]
        let found = ShareTokens.isWellFormed(guid) ? try services.store.read { try $0.share(shortGUID: guid) } : nil
        if rest.count == 2 && rest[1] == "thumbnail" {
            return try thumbnail(found)
        }
        guard rest.count == 1 else { throw CloudKitError(.notFound, "no page at \(path)") }
        // The page is the server's own: a user token alone (Bearer, or `ckWebAuthToken` as the
        // sign-in page sends the person back with it, A47) names the viewer, no API token needed.
        let presented = Authenticator.presentedUserToken(authorization: context.request.head.headers["authorization"], parameters: context.parameters)
        let viewer = presented.flatMap { try? services.authenticator.user(token: $0, container: found?.container ?? "") }
        return try landingPage(found, requested: guid, viewer: viewer, base: context.baseURL,
                               keepsToken: context.parameters["ckWebAuthToken"] != nil)
    }

    /// `applinks` for `/share/*` with the app IDs the server was configured with.
    func associationFile() -> JSONValue {
        let components: JSONValue = [["/": "/share/*", "comment": "Tandem share links"]]
        return ["applinks": ["details": [["appIDs": .array(services.appIDs.map(JSONValue.string)), "components": components]]]]
    }

    private struct Visible {
        var title: String
        var ownerName: String
        var hasThumbnail: Bool
        var accepted: Bool
    }

    /// What a viewer may see of a share; nil when it must look like no share at all.
    private func visible(_ found: (share: StoredShare, container: String, environment: Environment)?, viewer: UserAccount?) throws -> Visible? {
        guard let found else { return nil }
        return try services.store.read { reader in
            let share = found.share
            var principal: AccessPolicy.Principal = .anonymous
            if let viewer { principal = try ShareService.standing(reader, share, user: viewer).principal }
            let isPublic = share.publicPermission == .readOnly || share.publicPermission == .readWrite
            let participates: Bool
            switch principal {
            case .owner, .participant, .invited: participates = true
            default: participates = false
            }
            guard isPublic || participates else { return nil }
            let record = try reader.record(zone: share.zone, name: share.recordName)
            let owner = try reader.user(matching: UserIdentity(userRecordName: share.owner))
            let ownerName = [owner?.givenName, owner?.familyName].compactMap { $0 }.joined(separator: " ")
            var accepted = false
            if case .participant = principal { accepted = true }
            if principal == .owner { accepted = true }
            var title = "Shared item"
            if case .string(let text)? = record?.fields["cloudkit.title"], !text.isEmpty { title = text }
            return Visible(title: title,
                           ownerName: ownerName.isEmpty ? "Someone" : ownerName,
                           hasThumbnail: record?.fields["cloudkit.thumbnailImageData"] != nil, accepted: accepted)
        }
    }

    private func thumbnail(_ found: (share: StoredShare, container: String, environment: Environment)?) throws -> HTTPResponse {
        guard let found, found.share.publicPermission == .readOnly || found.share.publicPermission == .readWrite,
              case .bytes(let bytes)? = try services.store.read({ try $0.record(zone: found.share.zone, name: found.share.recordName) })?
                .fields["cloudkit.thumbnailImageData"] else {
            throw CloudKitError(.notFound, "no thumbnail")
        }
        return HTTPResponse(status: 200, headers: [("content-type", ImageTypes.sniff(bytes)), ("cache-control", "public, max-age=300")], body: bytes)
    }

    private func landingPage(_ found: (share: StoredShare, container: String, environment: Environment)?, requested: String,
                             viewer: UserAccount?, base: String, keepsToken: Bool) throws -> HTTPResponse {
        let shown = try visible(found, viewer: viewer)
        let guid = found?.share.shortGUID ?? ""
        // The page's own URL as asked for: the same for a private share and for no share at all.
        let pageURL = base + "/share/" + (requested.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        var page = LandingPageHTML(pageURL: pageURL)
        page.keepsToken = keepsToken
        // Signed out: a way to sign in that comes back here (A47). Offered for every well-formed
        // token, so a private share's page and a page for no share stay alike (D7).
        if viewer == nil && ShareTokens.isWellFormed(requested) {
            page.signInURL = "/signin?return=" + SignInHTML.percent("/share/" + requested)
        }
        if let found, let shown {
            page.title = shown.title
            page.description = "Shared by \(shown.ownerName)"
            page.imageURL = shown.hasThumbnail && found.share.publicPermission != .none ? pageURL + "/thumbnail" : nil
            page.action = shown.accepted ? .open : .accept(acceptURL: "\(base)/database/1/\(found.container)/\(found.environment.rawValue)/public/records/accept",
                                                          shortGUID: guid)
        } else if let found, found.share.allowsAccessRequests {
            page.action = .requestAccess(requestURL: "\(base)/tandem/1/\(found.container)/\(found.environment.rawValue)/shares/requestAccess",
                                         shortGUID: guid)
        }
        // After sign-in the page's URL holds `ckWebAuthToken` (until its script takes it out):
        // no referrer may carry it elsewhere.
        return HTTPResponse(status: 200, headers: [("content-type", "text/html; charset=utf-8"), ("cache-control", "no-store"),
                                                   ("x-content-type-options", "nosniff"), ("referrer-policy", "no-referrer")],
                            body: Array(page.render().utf8))
    }
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
