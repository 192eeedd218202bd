import Testing
import TandemCore
import TandemStore

/// Change logs and feeds through `any Store` (decisions P5): a zone's feed holds each record's
/// latest change in change-sequence order, tombstones and share exits for participants, what a
/// transaction logged, database feeds and purging.
@Suite struct ChangeFeedConformanceTests {
    static func page(_ store: any Store, _ zone: StoredZone, after: Int64, limit: Int = 100,
                     memberships: [String]? = nil) throws -> [ZoneChange] {
        try store.read { try $0.zoneChangePage(zone: zone, after: after, limit: limit, memberships: memberships, decodeFields: true) }.map(\.change)
    }

    @Test(arguments: StoreBackend.all(for: .changeFeeds))
    func aZoneFeedHoldsEachRecordsLatestChangeInSequenceOrder(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                try tx.save(fixture.record("a", tag: "1"), in: fixture.zone)   // 1
                try tx.save(fixture.record("b"), in: fixture.zone)             // 2
                try tx.save(fixture.record("a", tag: "2"), in: fixture.zone)   // 3
                try tx.remove("b", in: fixture.zone)                           // 4
                try tx.save(fixture.record("c"), in: fixture.zone)             // 5
            }
            let all = try Self.page(store, fixture.zone, after: 0)
            #expect(all == [ZoneChange(recordName: "a", recordType: "Note", sequence: 3, deleted: false),
                            ZoneChange(recordName: "b", recordType: "Note", sequence: 4, deleted: true),
                            ZoneChange(recordName: "c", recordType: "Note", sequence: 5, deleted: false)])
            #expect(try Self.page(store, fixture.zone, after: 3).map(\.recordName) == ["b", "c"])
            #expect(try Self.page(store, fixture.zone, after: 0, limit: 2).map(\.recordName) == ["a", "b"])
            #expect(try Self.page(store, fixture.zone, after: 5).isEmpty)
            let withRecords = try store.read {
                try $0.zoneChangePage(zone: fixture.zone, after: 0, limit: 10, memberships: nil, decodeFields: true)
            }
            #expect(withRecords[0].record?.recordChangeTag == "2")
            #expect(withRecords[1].record == nil, "a tombstone carries no record")
        }
    }

    @Test(arguments: StoreBackend.all(for: .changeFeeds))
    func aRecordLeavingAShareIsADeletionForThatShare(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            _ = try store.write { tx in try tx.save(fixture.record("x", tag: "1"), in: fixture.zone, membership: "share-a") }
            let logged = try store.write { tx -> [LoggedChange] in
                try tx.save(fixture.record("x", tag: "2"), in: fixture.zone, membership: "share-b")
                return tx.loggedChanges()
            }
            #expect(logged == [LoggedChange(zoneKey: fixture.zone.key, recordName: "x", recordType: "Note", deleted: false,
                                            membership: "share-b", previousMembership: "share-a")])
            let left = try Self.page(store, fixture.zone, after: 0, memberships: ["share-a"])
            #expect(left.map(\.recordName) == ["x"])
            #expect(left.allSatisfy { $0.deleted })
            let joined = try Self.page(store, fixture.zone, after: 0, memberships: ["share-b"])
            #expect(joined.map(\.deleted) == [false])
            #expect(try Self.page(store, fixture.zone, after: 0, memberships: ["share-c"]).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .changeFeeds))
    func loggedChangesAreThisTransactionsInOrder(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            _ = try store.write { tx in try tx.save(fixture.record("before"), in: fixture.zone) }
            let logged = try store.write { tx -> [LoggedChange] in
                try tx.save(fixture.record("one"), in: fixture.zone)
                try tx.remove("before", in: fixture.zone)
                return tx.loggedChanges()
            }
            #expect(logged.map(\.recordName) == ["one", "before"])
            #expect(logged.map(\.deleted) == [false, true])
        }
    }

    @Test(arguments: StoreBackend.all(for: .changeFeeds))
    func databaseFeedsListChangedAndDeletedZones(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let owner = FeedOwner(viewer: fixture.owner.recordName, container: Fixture.container, environment: .development, scope: .private)
            let start = try store.read { try $0.feedClock() }.sequence
            try store.write { tx in
                try tx.save(fixture.record("a"), in: fixture.zone)
                try tx.zoneActivity(fixture.zone, container: Fixture.container, environment: .development, viewersChanged: false, at: 2_000)
            }
            let changed = try store.read { try $0.databaseChanges(owner, after: start, limit: 10) }
            #expect(changed.map(\.zoneID) == [fixture.zone.zoneID])
            #expect(changed.first?.deleted == false)
            let clock = try store.read { try $0.feedClock() }.sequence
            #expect(clock > start)
            #expect(try store.read { try $0.databaseChanges(owner, after: clock, limit: 10) }.isEmpty)
            try store.write { tx in
                try tx.zoneDeletedFromFeeds(fixture.zone, at: 3_000)
                try tx.deleteZone(fixture.zone)
            }
            let deleted = try store.read { try $0.databaseChanges(owner, after: clock, limit: 10) }
            #expect(deleted.map(\.zoneID) == [fixture.zone.zoneID])
            #expect(deleted.first?.deleted == true)
            #expect(deleted.first?.reason == "DELETED")
            // Another owner's feed does not list it.
            let stranger = FeedOwner(viewer: "_0000000000000000000000000000000f", container: Fixture.container, environment: .development,
                                     scope: .private)
            #expect(try store.read { try $0.databaseChanges(stranger, after: start, limit: 10) }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .changeFeeds))
    func purgingForgetsOldTombstonesAndMovesTheHorizon(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                try tx.save(fixture.record("gone", at: 2_000), in: fixture.zone)   // 1
                try tx.save(fixture.record("kept", at: 2_000), in: fixture.zone)   // 2
            }
            _ = try store.write { tx in try tx.remove("gone", in: fixture.zone) }   // 3, a tombstone logged now
            #expect(try store.read { try $0.purgedSequence(zone: fixture.zone) } == 0)
            let purged = try store.write { tx in try tx.purgeChanges(olderThan: Clock.milliseconds() + 60_000) }
            #expect(purged >= 1)
            #expect(try store.read { try $0.purgedSequence(zone: fixture.zone) } >= 3)
            // The live record is still in the feed; the tombstone is not.
            #expect(try Self.page(store, fixture.zone, after: 0).map(\.recordName) == ["kept"])
        }
    }
}
