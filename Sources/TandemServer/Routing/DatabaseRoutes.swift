import TandemCore
import TandemHTTP
import TandemStore

/// The route table of CloudKit Web Services operations this server answers.
enum DatabaseRoutes {
    static func all(_ services: Services) -> [DatabaseRoute] {
        RecordRoutes.routes(services) + ZoneRoutes.routes(services) + UserRoutes.routes(services)
            + [AssetRoutes.uploadRoute(services)]
    }
}
