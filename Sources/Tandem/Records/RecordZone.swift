internal import TandemCore

/// A record zone (CloudKit's `CKRecordZone`): a named area of one database that records live
/// in, with its own change feed. Custom zones commit batches atomically; the default zone does not.
///
/// ```swift
/// let trips = try await container.privateDatabase.save(RecordZone(zoneName: "Trips"))
/// ```
///
/// Limits: names are 1–255 printable ASCII characters (decisions D12). CloudKit Web Services:
/// zones/modify, zones/lookup, zones/list.
public struct RecordZone: Sendable, Hashable {
    /// A zone's identity (CloudKit's `CKRecordZone.ID`): its name and its owner.
    public struct ID: Sendable, Hashable, CustomStringConvertible {
        /// The default zone's name (`CKRecordZone.ID.defaultZoneName`).
        public static let defaultZoneName = "_defaultZone"
        /// The owner name meaning "the signed-in user" (`CKCurrentUserDefaultName`).
        public static let currentUserOwnerName = "__defaultOwner__"
        /// The signed-in user's default zone (`CKRecordZone.ID.default`).
        public static let `default` = ID()

        public var zoneName: String
        /// A user record name; `currentUserOwnerName` for zones the signed-in user owns. Zones in
        /// the shared database carry their owner's user record name.
        public var ownerName: String

        public init(zoneName: String = ID.defaultZoneName, ownerName: String = ID.currentUserOwnerName) {
            self.zoneName = zoneName
            self.ownerName = ownerName
        }

        public var description: String { "\(zoneName):\(ownerName)" }
    }

    public var zoneID: ID
    /// The zone-wide share (`cloudkit.zoneshare`) when the zone is shared as a whole, as the
    /// server last said (CloudKit: `CKRecordZone.share`); nil otherwise and for zones made here.
    public internal(set) var share: Reference?

    public init(zoneName: String) { zoneID = ID(zoneName: zoneName) }
    public init(zoneID: ID) { self.zoneID = zoneID }
}

extension RecordZone.ID {
    /// The wire zone ID: the current user's zones go without an owner (the server reads "the caller").
    var wire: ZoneID {
        ZoneID(zoneName: zoneName, ownerRecordName: ownerName == Self.currentUserOwnerName ? nil : ownerName)
    }

    /// A zone ID from the server. In the private and public databases every zone is the caller's,
    /// so the owner is `currentUserOwnerName` whatever the server spelled, as in CloudKit.
    init(wire: ZoneID, scope: Database.Scope) {
        let owner = scope == .shared ? (wire.ownerRecordName ?? Self.currentUserOwnerName) : Self.currentUserOwnerName
        self.init(zoneName: wire.zoneName, ownerName: owner)
    }
}
