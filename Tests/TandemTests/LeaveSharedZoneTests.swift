import Foundation
import Testing
import Tandem

/// Deleting a zone from the shared database leaves its share (CloudKit's meaning, which
/// `Database.deleteRecordZone` documents and `LocalStore.purgeZone` relies on; issue 14 item 9).
@Suite("Leaving a shared zone")
struct LeaveSharedZoneTests {
    let server = TestServer.shared

    /// Ada shares a new trip with a new invitee, who accepts; returns the invitee's container,
    /// record name, the zone as their shared database names it, and the share's ID.
    func sharedTrip() async throws -> (invitee: Container, name: String, zoneID: RecordZone.ID, shareID: Record.ID, rootID: Record.ID) {
        let email = "\(unique("leaver").lowercased())@example.com"
        let (name, token) = try server.addUser(email: email, name: "Lee Leaver")
        let invitee = server.container(token: token)
        let zone = try await server.ada.privateDatabase.save(RecordZone(zoneName: unique("trips")))
        var trip = Record(recordType: "Trip", recordID: Record.ID(recordName: unique("trip"), zoneID: zone.zoneID))
        trip["title"] = "Porto"
        var share = Share(rootRecord: trip)
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: email), permission: .readWrite))
        let saved = try await server.ada.privateDatabase.modifyRecords(saving: [trip, share.record], deleting: [])
        let url = try #require(Share(try saved.saveResults[share.recordID]!.get())?.url)
        _ = try await invitee.accept(try await invitee.shareMetadata(for: url))
        let zones = try await invitee.sharedDatabase.allRecordZones()
        let sharedZone = try #require(zones.first { $0.zoneID.zoneName == zone.zoneID.zoneName })
        return (invitee, name, sharedZone.zoneID, share.recordID, trip.recordID)
    }

    @Test func deleteRecordZoneInTheSharedDatabaseLeavesTheShare() async throws {
        let (invitee, name, zoneID, shareID, rootID) = try await sharedTrip()
        let deleted = try await invitee.sharedDatabase.deleteRecordZone(withID: zoneID)
        #expect(deleted == zoneID)
        #expect(try await invitee.sharedDatabase.allRecordZones().contains { $0.zoneID == zoneID } == false)
        await #expect(throws: TandemError.self) {
            try await invitee.sharedDatabase.record(for: Record.ID(recordName: rootID.recordName, zoneID: zoneID))
        }
        // The owner's zone and records stay; the share no longer lists the leaver.
        #expect(try await server.ada.privateDatabase.record(for: rootID)["title"] as? String == "Porto")
        let ownerView = try #require(Share(try await server.ada.privateDatabase.record(for: shareID)))
        #expect(!ownerView.participants.contains { $0.userIdentity.userRecordID?.recordName == name })
        // Leaving again: the zone is no longer in their shared database.
        do {
            _ = try await invitee.sharedDatabase.deleteRecordZone(withID: zoneID)
            Issue.record("a second leave succeeded")
        } catch {
            #expect(error.code == .zoneNotFound)
        }
    }

    @Test func aZoneSharedAsAWholeNamesItsShare() async throws {
        let zone = try await server.ada.privateDatabase.save(RecordZone(zoneName: unique("whole")))
        #expect(zone.share == nil)
        let share = Share(recordZoneID: zone.zoneID)
        _ = try await server.ada.privateDatabase.save(share.record)
        let fetched = try await server.ada.privateDatabase.recordZone(for: zone.zoneID)
        #expect(fetched.share?.recordID == share.recordID)
        #expect(try await server.ada.privateDatabase.allRecordZones().first { $0.zoneID == zone.zoneID }?.share?.recordID == share.recordID)
    }

    @Test func purgeZoneOfASharedZoneLeavesItOnTheServer() async throws {
        let (invitee, _, zoneID, _, rootID) = try await sharedTrip()
        let store = try makeStore(invitee, automaticallySync: false)
        try await store.sync()
        #expect(try store.zones(in: .shared).contains(zoneID))
        try await store.purgeZone(zoneID)
        #expect(try !store.zones(in: .shared).contains(zoneID))
        #expect(try store.record(for: Record.ID(recordName: rootID.recordName, zoneID: zoneID)) == nil)
        #expect(try await invitee.sharedDatabase.allRecordZones().contains { $0.zoneID == zoneID } == false)
    }
}
