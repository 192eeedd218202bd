import TandemStore

/// The services one server instance runs, built once at start.
struct Services: Sendable {
    let store: any Store
    let authenticator: Authenticator
    let records: RecordService
    let zones: ZoneService
    let assetRoutes: AssetRoutes
    let tokens: SyncTokens

    init(store: any Store, secret: [UInt8]) {
        self.store = store
        authenticator = Authenticator(store: store)
        records = RecordService(store: store)
        tokens = SyncTokens(secret: secret)
        zones = ZoneService(store: store)
        assetRoutes = AssetRoutes(store: store)
    }
}
