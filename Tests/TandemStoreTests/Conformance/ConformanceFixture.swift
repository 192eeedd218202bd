import Synchronization
import TandemCore
import TandemStore

/// What most conformance tests start from: a container `iCloud.conformance`, a user, and the
/// user's private zone `notes` (decisions P5).
struct Fixture {
    static let container = "iCloud.conformance"
    let owner: UserAccount
    let zone: StoredZone

    var scope: DatabaseScope { Self.scope(owner: owner.recordName) }

    static func scope(owner: String, database: DatabaseType = .private) -> DatabaseScope {
        DatabaseScope(container: container, environment: .development, database: database, owner: owner)
    }

    /// Makes the container, the owner (`owner@example.com`) and their zone.
    static func make(_ store: any Store, zoneName: String = "notes") throws -> Fixture {
        try store.write { tx in
            _ = try tx.createContainer(container, at: 1_000)
            let owner = try tx.addUser(email: "owner@example.com", givenName: "Olive", familyName: "Owner", phoneNumber: nil, at: 1_000)
            let zone = try tx.ensureZone(scope(owner: owner.recordName), name: zoneName, at: 1_000)
            return Fixture(owner: owner, zone: zone)
        }
    }

    /// Makes the fixture in a fresh store of `backend` whose development schema indexes
    /// `fields`, saves `records` (made from the fixture) and runs `body`.
    static func withSchema(_ backend: StoreBackend, indexing fields: [IndexedField], records: (Fixture) -> [Record] = { _ in [] },
                           _ body: (any Store, Fixture) throws -> Void) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let saved = records(fixture)
            try store.write { tx in
                _ = try tx.putSchema("DEFINE SCHEMA", etag: "e1", fields: fields, container: Fixture.container, environment: .development,
                                     createSortIndexes: true, at: 1_000)
                for record in saved { try tx.save(record, in: fixture.zone) }
            }
            try body(store, fixture)
        }
    }

    /// A record of `type` in the fixture's zone with `fields`, stamped by the owner at `time`.
    func record(_ name: String, type: String = "Note", fields: [String: FieldValue] = [:], tag: String = "t1",
                at time: Int64 = 2_000) -> Record {
        let stamp = Record.Stamp(timestamp: time, userRecordName: owner.recordName, deviceID: "device")
        return Record(recordName: name, recordType: type, recordChangeTag: tag, fields: fields, zoneID: zone.zoneID,
                      created: stamp, modified: stamp)
    }
}

extension StoreWriting {
    /// Puts `record` into `zone` at the zone's next change sequence (what the records service
    /// does for each saved record); returns that sequence.
    @discardableResult
    func save(_ record: Record, in zone: StoredZone, membership: String? = nil) throws -> Int64 {
        let sequence = try nextChangeSequence(zone)
        try putRecord(record, zone: zone, sequence: sequence, membership: membership)
        return sequence
    }

    /// Deletes `name` from `zone` at the zone's next change sequence; returns that sequence.
    @discardableResult
    func remove(_ name: String, type: String = "Note", in zone: StoredZone) throws -> Int64 {
        let sequence = try nextChangeSequence(zone)
        try deleteRecord(name: name, recordType: type, zone: zone, sequence: sequence)
        return sequence
    }
}

/// The error a conformance body throws on purpose, to see that its writes are gone.
struct Abandon: Error {}

/// Values appended from several threads (after-commit hooks, racing writers).
final class HookLog: Sendable {
    private let entries = Mutex<[Int64]>([])
    func append(_ value: Int64) { entries.withLock { $0.append(value) } }
    var values: [Int64] { entries.withLock { $0 } }
}
