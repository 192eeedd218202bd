import Testing
import TandemCore
import TandemStore

/// Subscriptions through `any Store` (decisions P5): stored by owner, database and ID; found by
/// the zone they see; deleted once.
@Suite struct SubscriptionConformanceTests {
    static func stored(_ owner: String, _ id: String, scope: DatabaseType = .private, kind: Subscription.Kind = .database,
                       zoneID: ZoneID? = nil) -> StoredSubscription {
        StoredSubscription(key: 0, container: Fixture.container, environment: .development, scope: scope, owner: owner,
                           subscription: Subscription(subscriptionID: id, kind: kind, zoneID: zoneID,
                                                      queryJSON: kind == .query ? QueryCodec.encodeQuery(Query(recordType: "Note")) : nil,
                                                      firesOnce: kind == .query, zoneWide: kind == .query && zoneID == nil))
    }

    @Test(arguments: StoreBackend.all(for: .subscriptions))
    func subscriptionsAreStoredReplacedFoundAndDeleted(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let owner = fixture.owner.recordName
            try store.write { tx in
                try tx.putSubscription(Self.stored(owner, "all-changes"), at: 2_000)
                try tx.putSubscription(Self.stored(owner, "notes-zone", kind: .zone, zoneID: fixture.zone.zoneID), at: 2_000)
                try tx.putSubscription(Self.stored(owner, "shared", scope: .shared), at: 2_000)
                // The same ID again replaces it.
                try tx.putSubscription(Self.stored(owner, "notes-zone", kind: .zone, zoneID: fixture.zone.zoneID), at: 3_000)
            }
            let privateOnes = try store.read {
                try $0.subscriptions(owner: owner, container: Fixture.container, environment: .development, scope: .private)
            }
            #expect(Set(privateOnes.map(\.subscription.subscriptionID)) == ["all-changes", "notes-zone"])
            #expect(privateOnes.first { $0.subscription.subscriptionID == "notes-zone" }?.subscription.zoneID == fixture.zone.zoneID)
            #expect(try store.read { try $0.subscriptions(owner: owner, limit: 10) }.count == 3)
            let seeing = try store.read { try $0.subscriptions(seeing: fixture.zone, container: Fixture.container, environment: .development) }
            #expect(Set(seeing.map(\.subscription.subscriptionID)).isSuperset(of: ["all-changes", "notes-zone"]))
            #expect(try store.write { try $0.deleteSubscription(owner: owner, container: Fixture.container, environment: .development,
                                                                scope: .private, id: "notes-zone") })
            #expect(try !store.write { try $0.deleteSubscription(owner: owner, container: Fixture.container, environment: .development,
                                                                 scope: .private, id: "notes-zone") })
            #expect(try store.read { try $0.subscriptions(owner: owner, limit: 10) }.count == 2)
        }
    }

    @Test(arguments: StoreBackend.all(for: .subscriptions))
    func publicQuerySubscriptionsAreListedPerContainer(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                try tx.putSubscription(Self.stored(fixture.owner.recordName, "public-query", scope: .public, kind: .query), at: 2_000)
            }
            let found = try store.read { try $0.publicSubscriptions(container: Fixture.container, environment: .development) }
            #expect(found.map(\.subscription.subscriptionID) == ["public-query"])
            #expect(found.first?.subscription.query?.recordType == "Note")
            #expect(found.first?.subscription.firesOnce == true)
            #expect(try store.read { try $0.publicSubscriptions(container: Fixture.container, environment: .production) }.isEmpty)
        }
    }
}
