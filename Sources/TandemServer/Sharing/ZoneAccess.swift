import TandemCore
import TandemStore

/// The caller's standing in one owner zone, loaded once per request: the zone owner, or a
/// participant of some of its shares. Which share covers a record is the record's stored
/// membership (or the zone-wide share), so a check is a dictionary lookup, not a walk up the
/// `parent` chain (DESIGN.md §4, §6).
struct ZoneAccess {
    let zone: StoredZone
    let user: String
    let isOwner: Bool
    /// The zone's shares by share record name.
    let shares: [String: StoredShare]
    let zoneShare: StoredShare?
    /// The caller's participations, by share key.
    let participations: [Int64: StoredParticipant]

    static func load(_ reader: any StoreReading, zone: StoredZone, user: String) throws -> ZoneAccess {
        let isOwner = zone.zoneID.ownerRecordName == user
        // The default zone cannot be shared, so its requests skip the lookup.
        let all = zone.zoneID.isDefaultZone ? [] : try reader.shares(zone: zone)
        return ZoneAccess(zone: zone, user: user, isOwner: isOwner,
                          shares: Dictionary(all.map { ($0.recordName, $0) }, uniquingKeysWith: { a, _ in a }),
                          zoneShare: all.first(where: \.isZoneWide),
                          participations: isOwner ? [:] : try reader.participations(zone: zone, user: user))
    }

    /// The share covering a record with this membership: the zone-wide share, or the share whose
    /// hierarchy holds it.
    func coveringShare(membership: String?) -> StoredShare? {
        zoneShare ?? membership.flatMap { shares[$0] }
    }

    /// The caller's relation to `share` (nil: a record in no share).
    func principal(for share: StoredShare?) -> AccessPolicy.Principal {
        if isOwner { return .owner }
        guard let share, let participation = participations[share.key] else { return .stranger }
        return Self.principal(participation, share: share)
    }

    /// A public user's permission is the share's `publicPermission` at the time of asking.
    static func principal(_ participation: StoredParticipant, share: StoredShare) -> AccessPolicy.Principal {
        AccessPolicy.principal(status: participation.status, role: participation.role, permission: participation.permission,
                               publicPermission: share.publicPermission)
    }

    /// Decides `action` on a record with this membership.
    func decide(_ action: AccessPolicy.Action, membership: String?, blocked: Bool = false) -> AccessPolicy.Decision {
        let share = coveringShare(membership: membership)
        return AccessPolicy.decide(principal(for: share), action, share: Self.facts(share, blocked: blocked))
    }

    static func facts(_ share: StoredShare?, blocked: Bool = false) -> AccessPolicy.ShareFacts {
        AccessPolicy.ShareFacts(publicPermission: share?.publicPermission ?? .none,
                                allowsAccessRequests: share?.allowsAccessRequests ?? false, callerIsBlocked: blocked)
    }

    /// Keys of the shares the caller reads this zone through; nil for the owner.
    var acceptedShareKeys: [Int64]? {
        isOwner ? nil : participations.filter { $0.value.status == .accepted }.map(\.key).sorted()
    }

    /// Whether the caller has accepted any share of this zone (what puts it in their shared database).
    var hasAcceptedShare: Bool {
        participations.values.contains { $0.status == .accepted }
    }

    /// Share record names the caller may read records of; nil means every record (owner, or an
    /// accepted zone-wide share).
    var readableMemberships: [String]? {
        if isOwner { return nil }
        if let zoneShare, participations[zoneShare.key]?.status == .accepted { return nil }
        return shares.values.filter { participations[$0.key]?.status == .accepted }.map(\.recordName).sorted()
    }
}
