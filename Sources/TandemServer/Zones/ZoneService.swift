public import TandemCore
public import TandemStore

/// Record zones of a database (CloudKit Web Services: zones/list, zones/lookup, zones/modify).
/// `_defaultZone` always exists and cannot be deleted.
public struct ZoneService: Sendable {
    public let store: any Store
    /// Told of zones created and deleted (database subscriptions fire on them).
    var hub: ChangeHub?
    /// Refreshes the highlight lists of the conversations a left share reached (W19).
    var conversationHub: ConversationHub?

    public init(store: any Store) { self.store = store }

    public enum ZoneResult: Sendable {
        /// A zone; `stored` is nil for a default zone never written to. `shares` is the FeedTag of
        /// the shares a participant reads it through (nil in the private database). `isShared`:
        /// the zone has a zone-wide share (`cloudkit.zoneshare`), which the answer names as the
        /// zone's `share` (CloudKit's `CKRecordZone.share`).
        case zone(ZoneID, StoredZone?, shares: Int64? = nil, isShared: Bool = false)
        case deleted(ZoneID)
        case failed(CloudKitError)
    }

    /// Every zone of the database. In the shared database: one zone per owner zone in which the
    /// caller accepted a share, addressed as `{zoneName, ownerRecordName}` (cloudkit.md §2.11).
    public func list(scope: RequestScope) throws -> [ZoneResult] {
        if scope.database.database == .shared {
            let accepted = try store.read {
                try $0.acceptedShares(user: scope.user, container: scope.database.container, environment: scope.database.environment)
            }
            var keys: [Int64: [Int64]] = [:]
            var order: [StoredZone] = []
            for (share, _) in accepted {
                if keys[share.zone.key] == nil { order.append(share.zone) }
                keys[share.zone.key, default: []].append(share.key)
            }
            let zoneWide = Set(accepted.filter { $0.0.isZoneWide }.map { $0.0.zone.key })
            return order.map { .zone($0.zoneID, $0, shares: FeedTags.shares(keys[$0.key]), isShared: zoneWide.contains($0.key)) }
        }
        return try store.read { reader in
            let stored = try reader.zones(scope.database)
            var results: [ZoneResult] = []
            let owner = scope.database.owner
            if !stored.contains(where: { $0.zoneID.isDefaultZone }) {
                results.append(.zone(ZoneID(zoneName: ZoneID.defaultZoneName, ownerRecordName: owner), nil))
            }
            results += try stored.map { .zone($0.zoneID, $0, isShared: try Self.hasZoneShare(reader, $0)) }
            return results
        }
    }

    /// True when `zone` is shared as a whole (CloudKit: `CKRecordZone.share` is set).
    static func hasZoneShare(_ reader: any StoreReading, _ zone: StoredZone) throws -> Bool {
        guard !zone.zoneID.isDefaultZone else { return false }
        return try reader.share(zone: zone, recordName: Share.zoneWideRecordName) != nil
    }

    public func lookup(_ zoneIDs: [ZoneID], scope: RequestScope) throws -> [ZoneResult] {
        try store.read { reader in
            try zoneIDs.map { zoneID in
                if scope.database.database == .shared {
                    do {
                        guard let (access, _) = try RecordService.resolve(reader, scope, zoneID) else {
                            return .failed(CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: zoneID))
                        }
                        return .zone(access.zone.zoneID, access.zone, shares: FeedTags.shares(access.acceptedShareKeys),
                                     isShared: access.zoneShare != nil)
                    } catch let error as CloudKitError {
                        return .failed(error)
                    }
                }
                let owned = ZoneID(zoneName: zoneID.zoneName, ownerRecordName: scope.database.owner)
                if let owner = zoneID.ownerRecordName, owner != scope.database.owner {
                    return .failed(CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: zoneID))
                }
                if let zone = try reader.zone(scope.database, name: zoneID.zoneName) {
                    return .zone(zone.zoneID, zone, isShared: try Self.hasZoneShare(reader, zone))
                }
                if zoneID.isDefaultZone { return .zone(owned, nil) }
                return .failed(CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: owned))
            }
        }
    }

    public enum Operation: Sendable {
        case create(ZoneID)
        case delete(ZoneID)
    }

    /// Creates (idempotently) and deletes zones, each operation on its own.
    public func modify(_ operations: [Operation], scope: RequestScope) throws -> [ZoneResult] {
        let now = Clock.milliseconds()
        let hub = self.hub
        return try store.write({ tx -> ZoneOutcome in
            var changed: [(zone: StoredZone, formerViewers: [String])] = []
            let results: [ZoneResult] = try operations.map { operation in
                switch operation {
                case .create(let zoneID):
                    if let owner = zoneID.ownerRecordName, owner != scope.database.owner {
                        return .failed(CloudKitError(.accessDenied, "zones can only be created in your own private database", zoneID: zoneID))
                    }
                    let existed = try tx.zone(scope.database, name: zoneID.zoneName) != nil
                    let zone = try tx.ensureZone(scope.database, name: zoneID.zoneName, at: now)
                    if !existed {
                        try tx.zoneActivity(zone, container: scope.database.container, environment: scope.database.environment, viewersChanged: false, at: now)
                        changed.append((zone, []))
                    }
                    return .zone(zone.zoneID, zone)
                case .delete(let zoneID):
                    if zoneID.isDefaultZone {
                        return .failed(CloudKitError(.badRequest, "_defaultZone cannot be deleted", zoneID: zoneID))
                    }
                    guard let zone = try tx.zone(scope.database, name: zoneID.zoneName),
                          zoneID.ownerRecordName == nil || zoneID.ownerRecordName == scope.database.owner else {
                        return .failed(CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: zoneID))
                    }
                    // Participants lose the zone from their shared database: their database subscriptions hear it.
                    let viewers = try tx.acceptedParticipants(zone: zone)
                    try tx.zoneDeletedFromFeeds(zone, at: now)
                    try tx.deleteZone(zone)
                    changed.append((zone, viewers))
                    return .deleted(zone.zoneID)
                }
            }
            let events = changed.map {
                ChangeEvent(container: scope.database.container, environment: scope.database.environment, zone: $0.zone,
                            deviceID: scope.deviceID, records: [], zoneChanged: true, formerViewers: $0.formerViewers)
            }
            return ZoneOutcome(results: results, events: events)
        }, afterCommit: { outcome in
            outcome.events.forEach { hub?.publish($0) }
        }).results
    }

    struct ZoneOutcome: @unchecked Sendable {
        var results: [ZoneResult]
        var events: [ChangeEvent]
    }
}
