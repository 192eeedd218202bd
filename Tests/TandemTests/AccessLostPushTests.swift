import Foundation
import TandemTestSupport
import Testing
@testable import Tandem

/// The owner hears when an invitee accepts (the share record changed outside records/modify),
/// and a participant the owner removes hears of it at once: their shared database lost the zone
/// (`ACCESS_LOST` in the database feed), so their database subscription fires (CloudKit:
/// a revoked share is a shared-database change).
@Suite("Access lost push")
struct AccessLostPushTests {
    @Test func removedParticipantGetsADatabaseNotification() async throws {
        let server = TestServer.shared
        let ada = server.ada, bob = server.bob
        let zone = try await ada.privateDatabase.save(RecordZone(zoneName: unique("revoked")))
        let root = Record(recordType: "Note", recordID: Record.ID(recordName: unique("note"), zoneID: zone.zoneID))
        var share = Share(rootRecord: root)
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readOnly))
        let saved = try await ada.privateDatabase.modifyRecords(saving: [root, share.record], deleting: [])
        let url = try #require(Share(try saved.saveResults[share.recordID]!.get())?.url)
        _ = try await bob.accept(try await bob.shareMetadata(for: url))
        let subscriptionID = unique("shared-db")
        try await bob.sharedDatabase.save(DatabaseSubscription(subscriptionID: subscriptionID))

        // Remove Bob once his stream is connected (notifications are not replayed), while he listens.
        let (connected, signal) = AsyncStream.makeStream(of: Void.self)
        var listening = bob.notifications
        listening.onConnected = { signal.yield() }
        let stream = listening
        let removal = Task {
            for await _ in connected { break }
            var current = try #require(Share(try await ada.privateDatabase.record(for: share.recordID)))
            let bobParticipant = try #require(current.participants.first { $0.role == .privateUser })
            current.removeParticipant(bobParticipant)
            _ = try await ada.privateDatabase.modifyRecords(saving: [current.record], deleting: [])
        }
        defer { removal.cancel() }
        let notification = try await withTimeout(30) { () async throws -> PushNotification? in
            for try await notification in stream
            where notification.subscriptionID == subscriptionID && notification.recordZoneID?.zoneName == zone.zoneID.zoneName {
                return notification
            }
            return nil
        }
        try await removal.value
        #expect(notification?.notificationType == .database)
        #expect(notification?.databaseScope == .shared)
        let changes = try await bob.sharedDatabase.databaseChanges(since: nil)
        #expect(!changes.modifications.contains { $0.zoneName == zone.zoneID.zoneName })
    }

    @Test func ownerHearsWhenTheInviteeAccepts() async throws {
        let server = TestServer.shared
        let ada = server.ada, bob = server.bob
        let zone = try await ada.privateDatabase.save(RecordZone(zoneName: unique("accepted")))
        let root = Record(recordType: "Note", recordID: Record.ID(recordName: unique("note"), zoneID: zone.zoneID))
        var share = Share(rootRecord: root)
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
        let saved = try await ada.privateDatabase.modifyRecords(saving: [root, share.record], deleting: [])
        let url = try #require(Share(try saved.saveResults[share.recordID]!.get())?.url)
        let subscriptionID = unique("zone")
        try await ada.privateDatabase.save(RecordZoneSubscription(zoneID: zone.zoneID, subscriptionID: subscriptionID))

        let (connected, signal) = AsyncStream.makeStream(of: Void.self)
        var listening = ada.notifications
        listening.onConnected = { signal.yield() }
        let stream = listening
        let acceptance = Task {
            for await _ in connected { break }
            _ = try await bob.accept(try await bob.shareMetadata(for: url))
        }
        defer { acceptance.cancel() }
        let notification = try await withTimeout(30) { () async throws -> PushNotification? in
            for try await notification in stream where notification.subscriptionID == subscriptionID { return notification }
            return nil
        }
        try await acceptance.value
        #expect(notification?.notificationType == .recordZone)
        #expect(notification?.recordZoneID?.zoneName == zone.zoneID.zoneName)
    }
}
