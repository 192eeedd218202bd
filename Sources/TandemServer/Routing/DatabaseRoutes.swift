import TandemCore
import TandemHTTP
import TandemStore

/// The route table of CloudKit Web Services operations this server answers.
enum DatabaseRoutes {
    static func all(_ services: Services) -> [DatabaseRoute] {
        RecordRoutes.routes(services) + ZoneRoutes.routes(services) + UserRoutes.routes(services) + UserDiscoveryRoutes.routes(services) + ShareRoutes.routes(services)
            + ChangeRoutes.routes(services) + SubscriptionRoutes.routes(services)
            + PushTokenRoutes.routes(services)
            + [AssetRoutes.uploadRoute(services), AssetRereference.route(services)]
    }

    /// Tandem's operations where CloudKit Web Services is silent (`/tandem/1/{container}/{environment}/...`).
    static func tandem(_ services: Services) -> [DatabaseRoute] {
        ShareRoutes.tandemRoutes(services) + UserDiscoveryRoutes.tandemRoutes(services) + LinkRoutes.tandemRoutes(services)
            + ConversationRoutes.routes(services) + HighlightRoutes.routes(services) + CollaborationRoutes.routes(services)
            + IdentityRoutes.tandemRoutes(services) + ActivityInvitationRoutes.routes(services)
    }
}
