import TandemCore
import TandemStore

extension ZoneService {
    /// zones/modify in the shared database: `delete` leaves the zone, that is every share the
    /// caller accepted in it (D5, as deleting the share record there does: their participation
    /// is `REMOVED`, the share record gets a new change tag, the zone leaves their shared
    /// database with `ACCESS_LOST`); the owner's zone and records stay. `create` is refused:
    /// shared zones are the owners'. Each operation stands alone. (CloudKit: deleting a zone
    /// from the shared database removes the user from its share; the SDK's `deleteRecordZone`
    /// and `LocalStore.purgeZone` rely on it.)
    /// - Returns per operation: the zone as deleted, `ZONE_NOT_FOUND` for a zone not in the
    ///   caller's shared database, `BAD_REQUEST` for `create`.
    public func leave(_ operations: [Operation], scope: RequestScope) throws -> [ZoneResult] {
        let now = Clock.milliseconds()
        let hub = self.hub, conversationHub = self.conversationHub
        let (container, environment) = (scope.database.container, scope.database.environment)
        return try store.write({ tx -> (ZoneOutcome, Set<String>) in
            var events: [ChangeEvent] = []
            var viewers = Set<String>()
            let results: [ZoneResult] = try operations.map { operation in
                let zoneID: ZoneID
                switch operation {
                case .create(let id):
                    return .failed(CloudKitError(.badRequest, "zones cannot be created in the shared database; create them in your private database",
                                                 zoneID: id))
                case .delete(let id):
                    zoneID = id
                }
                let access: ZoneAccess
                do {
                    guard let resolved = try RecordService.resolve(tx, scope, zoneID) else {
                        return .failed(CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' is not in your shared database", zoneID: zoneID))
                    }
                    access = resolved.0
                } catch let error as CloudKitError {
                    return .failed(error)
                }
                for share in access.shares.values.sorted(by: { $0.key < $1.key }) {
                    guard var mine = access.participations[share.key], mine.status == .accepted else { continue }
                    // The leaver's sends of its URL stop counting: those it reached get fresh lists (W19).
                    viewers.formUnion(try ShareReach.viewers(tx, shortGUID: share.shortGUID, container: container, environment: environment))
                    mine.status = .removed
                    try tx.putParticipant(mine, share: share)
                    try ShareRecords.touch(tx, share: share, by: scope.user, at: now)
                }
                let lost = try tx.zoneActivity(access.zone, container: scope.database.container, environment: scope.database.environment,
                                               viewersChanged: true, at: now)
                events.append(ChangeEvent(logged: tx, zone: access.zone, container: scope.database.container,
                                          environment: scope.database.environment, deviceID: scope.deviceID, formerViewers: lost))
                return .deleted(access.zone.zoneID)
            }
            return (ZoneOutcome(results: results, events: events), viewers)
        }, afterCommit: { outcome in
            outcome.0.events.forEach { hub?.publish($0) }
            conversationHub?.publish(ShareReach.effects(outcome.1, container: container, environment: environment))
        }).0.results
    }
}
