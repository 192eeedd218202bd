import TandemCore
import TandemStore

/// The services one server instance runs, built once at start.
struct Services: Sendable {
    let store: any Store
    let authenticator: Authenticator
    let records: RecordService
    let shares: ShareService
    let zones: ZoneService
    let assetRoutes: AssetRoutes
    let tokens: SyncTokens
    /// External base URL for links the server hands out; nil derives it from the Host header.
    let publicURL: String?
    /// App IDs (`TEAMID.bundle.id`) in the server's own apple-app-site-association.
    let appIDs: [String]
    let links: LinkService

    init(store: any Store, secret: [UInt8], publicURL: String? = nil, participantLimit: Int = Limits.participantsPerShare, appIDs: [String] = [],
         links: LinkService? = nil) {
        self.appIDs = appIDs
        self.links = links ?? LinkService(store: store)
        self.store = store
        self.publicURL = publicURL
        authenticator = Authenticator(store: store)
        records = RecordService(store: store, participantLimit: participantLimit)
        shares = ShareService(store: store, participantLimit: participantLimit)
        tokens = SyncTokens(secret: secret)
        zones = ZoneService(store: store)
        assetRoutes = AssetRoutes(store: store)
    }
}
