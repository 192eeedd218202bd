import TandemCore
import TandemStore

/// The services one server instance runs, built once at start.
struct Services: Sendable {
    let store: any Store
    let authenticator: Authenticator
    let records: RecordService
    let shares: ShareService
    let changes: ChangeFeedService
    let zones: ZoneService
    let assetRoutes: AssetRoutes
    let tokens: SyncTokens
    /// External base URL for links the server hands out; nil derives it from the Host header.
    let publicURL: String?
    /// App IDs (`TEAMID.bundle.id`) in the server's own apple-app-site-association.
    let appIDs: [String]

    init(store: any Store, secret: [UInt8], publicURL: String? = nil, participantLimit: Int = Limits.participantsPerShare, appIDs: [String] = []) {
        self.appIDs = appIDs
        self.store = store
        self.publicURL = publicURL
        authenticator = Authenticator(store: store)
        records = RecordService(store: store, participantLimit: participantLimit)
        shares = ShareService(store: store, participantLimit: participantLimit)
        tokens = SyncTokens(secret: secret)
        changes = ChangeFeedService(store: store, tokens: tokens)
        zones = ZoneService(store: store)
        assetRoutes = AssetRoutes(store: store)
    }
}
