import Foundation
import TandemTestSupport
import Testing
import Tandem

@Suite("Change feeds, subscriptions and notifications")
struct SyncTests {
    let server = TestServer.shared

    @Test func changeFeedsReturnOnlyWhatChangedSinceTheirTokens() async throws {
        // Bob's database is used only here and in no other test, so its feed is predictable.
        let db = server.container(token: server.bobToken).privateDatabase
        let start = try await db.databaseChanges(since: nil)
        let zone = try await db.save(RecordZone(zoneName: unique("feed")))
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: "n1", zoneID: zone.zoneID))
        note["title"] = "one"
        try await db.save(note)

        let changed = try await db.databaseChanges(since: start.changeToken)
        #expect(changed.modifications.contains(zone.zoneID))
        #expect(!changed.moreComing)

        let first = try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: nil)
        #expect(first.modifications.map(\.recordID) == [note.recordID])
        #expect(first.modifications.first?["title"] as? String == "one")
        #expect(first.deletions.isEmpty)

        let quiet = try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: first.changeToken)
        #expect(quiet.modifications.isEmpty && quiet.deletions.isEmpty)

        var second = Record(recordType: "Note", recordID: Record.ID(recordName: "n2", zoneID: zone.zoneID))
        second["title"] = "two"
        try await db.save(second)
        try await db.deleteRecord(withID: note.recordID)
        let next = try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: quiet.changeToken)
        #expect(next.modifications.map(\.recordID) == [second.recordID])
        #expect(next.deletions.map(\.recordID) == [note.recordID])
        #expect(next.deletions.map(\.recordType) == ["Note"])

        // The token survives a round trip through Codable (for a sync engine's saved state).
        let encoded = try JSONEncoder().encode(next.changeToken)
        let decoded = try JSONDecoder().decode(ServerChangeToken.self, from: encoded)
        #expect(try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: decoded).modifications.isEmpty)

        try await db.deleteRecordZone(withID: zone.zoneID)
        let gone = try await db.databaseChanges(since: changed.changeToken)
        #expect(gone.deletions.contains { $0.zoneID == zone.zoneID })
    }

    @Test func subscriptionsAreSavedFetchedAndDeleted() async throws {
        let db = server.ada.privateDatabase
        let id = unique("sub")
        let query = Query(recordType: "Note", filters: [.greaterThan("stars", 3)])
        let saved = try await db.save(QuerySubscription(recordType: query.recordType, filters: query.filters, subscriptionID: id,
                                                        options: .firesOnRecordCreation))
        #expect(saved.subscriptionID == id)
        let back = try #require(QuerySubscription(try await db.subscription(for: id)))
        #expect(back.recordType == "Note")
        #expect(back.filters == query.filters)
        #expect(back.zoneID == nil)
        #expect(back.querySubscriptionOptions == .firesOnRecordCreation)
        #expect(RecordZoneSubscription(try await db.subscription(for: id)) == nil)
        #expect(try await db.allSubscriptions().contains { $0.subscriptionID == id })
        try await db.deleteSubscription(withID: id)
        let error = await #expect(throws: TandemError.self) { try await db.subscription(for: id) }
        #expect(error?.code == .unknownItem)
    }

    @Test func zoneSubscriptionNotificationArrivesThroughContainerNotifications() async throws {
        let container = server.ada
        let db = container.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: unique("pushed")))
        let subscriptionID = unique("zone-sub")
        try await db.save(RecordZoneSubscription(zoneID: zone.zoneID, subscriptionID: subscriptionID))

        // Write until the stream (connecting concurrently) delivers one: the stream does not
        // replay what was sent before it connected.
        let writer = Task {
            var n = 0
            while !Task.isCancelled {
                n += 1
                _ = try? await db.save(Record(recordType: "Ping", recordID: Record.ID(recordName: "ping-\(n)", zoneID: zone.zoneID)))
                try? await Task.sleep(nanoseconds: 300_000_000)
            }
        }
        defer { writer.cancel() }
        let notification = try await withTimeout(30) {
            for try await notification in container.notifications where notification.subscriptionID == subscriptionID {
                return notification
            }
            throw TestFailure("the notification stream ended")
        }
        #expect(notification.notificationType == .recordZone)
        #expect(notification.recordZoneID == zone.zoneID)
        #expect(notification.databaseScope == .private)
    }

    @Test func streamWithBadCredentialsEndsNotAuthenticated() async throws {
        let container = server.container(token: "not-a-token")
        let error = await #expect(throws: TandemError.self) {
            try await withTimeout(30) {
                for try await _ in container.notifications {}
            }
        }
        #expect(error?.code == .notAuthenticated)
    }
}
