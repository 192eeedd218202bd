import TandemCore
import TandemStore

/// The URL a Tandem share's collaboration shows, and how other forms of it find that URL
/// (decisions W17, W18, W20). A share's URL names it by path (`/share/{shortGUID}`) under any
/// host, query or fragment, and anyone may send any form of it, so the form shown to the
/// share's people is never a stranger's choice.
enum ShareURLs {
    /// The URL a share's collaboration is created with: the server's own
    /// (`{public URL}/share/{shortGUID}`, as `SharePresenter` hands it out) when `--public-url`
    /// is configured; otherwise, since the server's name then comes from each request's Host
    /// header, the form `sent` by one of the share's people, reduced to
    /// `scheme://host[:port]/share/{shortGUID}` (no user, query or fragment). Nil when `sender`
    /// is not one of them: their send is a plain link and makes no collaboration.
    static func canonical(_ reader: any StoreReading, sent: String, share: StoredShare, sender: String, publicURL: String?) throws -> String? {
        if let publicURL { return SharePresenter.url(base: publicURL, shortGUID: share.shortGUID) }
        guard try SharePeople.of(reader, share: share).contains(sender), let (normalized, _) = MessageLinks.normalize(sent) else { return nil }
        let scheme = normalized.hasPrefix("https://") ? "https" : "http"
        let authority = normalized.dropFirst(scheme.count + 3).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority
        return "\(scheme)://\(host)/share/\(share.shortGUID)"
    }

    /// The URL `normalized` is filed under: a Tandem share's collaboration URL for any form of
    /// that share's URL (another host, a query, a fragment), as messages file it (W17); else
    /// `normalized` itself.
    static func filed(_ reader: any StoreReading, _ normalized: String, container: String, environment: Environment) throws -> String {
        guard let guid = Collaborations.shareGUID(normalized),
              try reader.collaboration(url: normalized, container: container, environment: environment) == nil,
              let collaboration = try reader.collaboration(id: Collaborations.identifier(shortGUID: guid), container: container,
                                                           environment: environment) else { return normalized }
        return collaboration.url
    }
}
