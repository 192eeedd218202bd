import TandemCore
import TandemSchema
import TandemStore

/// The public database: one default zone per container environment, owned by no user
/// (`DatabaseScope.publicOwner`), readable without signing in where the schema's grants allow
/// (spec §2.11; grants in `PublicGrants`).
enum PublicDatabase {
    /// Operations an anonymous caller may use on the public database: reads.
    static let anonymousOperations: Set<String> = ["records/lookup", "records/query", "zones/list", "zones/lookup"]

    static func allowsAnonymous(_ operation: String, database: DatabaseType) -> Bool {
        database == .public && anonymousOperations.contains(operation)
    }

    /// The public database's default zone (nil until its first write), with owner access: the
    /// share rules do not apply here, grants do.
    /// - Throws: `ZONE_NOT_FOUND` for any other zone (the public database has only the default zone).
    static func resolve(_ reader: any StoreReading, _ scope: RequestScope, _ zoneID: ZoneID) throws -> (ZoneAccess, RequestScope)? {
        guard zoneID.isDefaultZone else {
            throw CloudKitError(.zoneNotFound, "the public database has only the default zone, not '\(zoneID.zoneName)'", zoneID: zoneID)
        }
        guard let zone = try reader.zone(scope.database, name: zoneID.zoneName) else { return nil }
        return (ZoneAccess(zone: zone, user: scope.user, isOwner: true, shares: [:], zoneShare: nil, participations: [:]), scope)
    }
}

extension RequestContext {
    /// `scope`, with the public database's zones owned by `DatabaseScope.publicOwner` rather
    /// than by the caller.
    var recordScope: RequestScope {
        var scope = self.scope
        if database == .public { scope.database.owner = DatabaseScope.publicOwner }
        return scope
    }
}
