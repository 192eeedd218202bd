import Foundation
import TandemCore
import TandemLinks
import TandemStore

/// Which links are collaborations: a Tandem share URL (`{base}/share/{shortGUID}`) of the
/// conversation's container, or a collaboration the sender's app started (custom
/// infrastructure). Registered when the message is stored, in its transaction.
enum Collaborations {
    /// The identifier of a Tandem share's collaboration (decisions W4).
    static func identifier(shortGUID: String) -> String { shareIdentifierPrefix + shortGUID }

    /// The prefix of every share's collaboration identifier, reserved for them.
    static let shareIdentifierPrefix = "share:"

    /// The content type of a share without `cloudkit.type`.
    static let shareContentType = "com.apple.cloudkit.share"

    /// The short GUID a `/share/{shortGUID}` URL names (any host), or nil.
    static func shareGUID(_ url: String) -> String? {
        let path = LinkURL(url).path
        guard path.hasPrefix("/share/") else { return nil }
        var guid = String(path.dropFirst("/share/".count))
        if guid.hasSuffix("/") { guid.removeLast() }  // `/share/G/` is the same share (W20)
        guard !guid.isEmpty, guid.count <= 64, !guid.contains("/") else { return nil }
        return guid
    }

    /// Registers `url`, sent by `sender`, as a collaboration when it names a share of this
    /// container environment (by path: `/share/{shortGUID}`, whatever the host, since the server
    /// may be reached under several names, and whatever query or fragment follows). Returns it,
    /// or nil for any other link. A share has one collaboration, under its canonical URL
    /// (`ShareURLs.canonical`, W18: the server's own with `publicURL`, else the form one of the
    /// share's people sent first; a stranger's send makes none): a later form of the same
    /// share's URL returns that collaboration, whose `url` the caller files the link under (W17).
    @discardableResult
    static func registerShareURL(_ tx: any StoreWriting, _ url: String, sender: String, publicURL: String?, container: String,
                                 environment: Environment, at now: Int64) throws -> StoredCollaboration? {
        guard let guid = shareGUID(url) else { return nil }
        if let existing = try tx.collaboration(url: url, container: container, environment: environment) { return existing }
        guard let share = try tx.share(shortGUID: guid, container: container, environment: environment) else { return nil }
        if let existing = try tx.collaboration(id: identifier(shortGUID: guid), container: container, environment: environment) { return existing }
        guard let canonical = try ShareURLs.canonical(tx, sent: url, share: share, sender: sender, publicURL: publicURL) else { return nil }
        let record = try tx.record(zone: share.zone, name: share.recordName)
        var title: String?
        var type = shareContentType
        if case .string(let value)? = record?.fields["cloudkit.title"] { title = value }
        if case .string(let value)? = record?.fields["cloudkit.type"] { type = value }
        let collaboration = StoredCollaboration(id: identifier(shortGUID: guid), container: container, environment: environment, url: canonical,
                                                owner: share.owner, kind: .share, title: title, contentType: type,
                                                createdAt: share.createdAt, shareGUID: guid)
        try tx.putCollaboration(collaboration)
        return try tx.collaboration(url: canonical, container: container, environment: environment) ?? collaboration
    }

    /// Records a collaboration an app started for a message (`SWStartCollaborationAction`
    /// fulfilled with URL and identifier). Sending it again is fine; another owner's identifier,
    /// or a URL already used by another collaboration, is `BAD_REQUEST`.
    static func start(_ tx: any StoreWriting, _ started: ConversationService.StartedCollaboration, owner: String, container: String,
                      environment: Environment, at now: Int64) throws {
        // `share:` names Tandem shares (W4); an app's own collaboration taking one would capture
        // the share's notices and stop its URL from ever becoming a collaboration highlight.
        guard !started.identifier.hasPrefix(shareIdentifierPrefix) else {
            throw CloudKitError.badRequest("collaboration identifiers starting '\(shareIdentifierPrefix)' are reserved for Tandem shares")
        }
        if let guid = shareGUID(started.url), try tx.share(shortGUID: guid, container: container, environment: environment) != nil {
            throw CloudKitError.badRequest("'\(started.url)' is a Tandem share URL; send it as a link, not as a collaboration of the app")
        }
        if let existing = try tx.collaboration(id: started.identifier, container: container, environment: environment) {
            guard existing.owner == owner, existing.container == container, existing.environment == environment else {
                throw CloudKitError.badRequest("collaboration '\(started.identifier)' belongs to someone else")
            }
            return
        }
        if let byURL = try tx.collaboration(url: started.url, container: container, environment: environment), byURL.id != started.identifier {
            throw CloudKitError.badRequest("'\(started.url)' is already the URL of another collaboration")
        }
        guard !started.contentType.isEmpty, started.contentType.count <= 256 else {
            throw CloudKitError.badRequest("contentType must be a uniform type identifier (1 to 256 characters)")
        }
        try tx.putCollaboration(StoredCollaboration(id: started.identifier, container: container, environment: environment, url: started.url,
                                                    owner: owner, kind: .custom, title: started.title, contentType: started.contentType,
                                                    createdAt: now))
    }
}
