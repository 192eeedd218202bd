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
        let hub = self.hub
        return try store.write({ tx -> ZoneOutcome in
            var events: [ChangeEvent] = []
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
            return ZoneOutcome(results: results, events: events)
        }, afterCommit: { outcome in
            outcome.events.forEach { hub?.publish($0) }
        }).results
    }
}
