import Foundation
import Testing
import Tandem

@Suite("Sharing")
struct SharingTests {
    let server = TestServer.shared

    @Test func ownerSharesRootInOneSaveAndInviteeAcceptsAndEdits() async throws {
        let ada = server.ada
        let bob = server.bob
        let adaID = try await ada.userRecordID()
        #expect(adaID.recordName == server.adaRecordName)

        let zone = try await ada.privateDatabase.save(RecordZone(zoneName: unique("trips")))
        var trip = Record(recordType: "Trip", recordID: Record.ID(recordName: unique("lisbon"), zoneID: zone.zoneID))
        trip["title"] = "Lisbon in May"
        var stop = Record(recordType: "Stop", recordID: Record.ID(recordName: unique("stop"), zoneID: zone.zoneID))
        stop["name"] = "Belém"
        stop.setParent(trip.recordID)
        var share = Share(rootRecord: trip)
        share.title = "Lisbon in May"
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))

        let result = try await ada.privateDatabase.modifyRecords(saving: [trip, stop, share.record], deleting: [])
        #expect(result.partialFailure == nil)
        let savedShare = try result.savedShare(share)
        #expect(savedShare.title == "Lisbon in May")
        #expect(savedShare.owner?.userIdentity.userRecordID?.recordName == adaID.recordName)
        let invitee = try #require(savedShare.participants.first { $0.role == .privateUser })
        #expect(invitee.permission == .readWrite)
        #expect(invitee.acceptanceStatus == .pending)
        let url = try #require(savedShare.url)
        #expect(try await ada.privateDatabase.record(for: trip.recordID).share?.recordID == share.recordID)

        // Sharing the same root again is refused.
        let again = Share(rootRecord: trip)
        let refused = try await ada.privateDatabase.modifyRecords(saving: [again.record], deleting: [])
        #expect(refused.saveResults[again.recordID].flatMap { try? $0.get() } == nil)
        #expect(throws: TandemError.self) { try refused.savedShare(again) }
        // The typed accessor names what it was asked for wrongly.
        #expect(throws: TandemError.self) { try result.savedShare(withID: trip.recordID) }
        #expect((try? result.savedShare(withID: trip.recordID)) == nil)
        do { _ = try result.savedShare(withID: trip.recordID) } catch { #expect(error.code == .invalidArguments) }
        do { _ = try refused.savedShare(withID: stop.recordID) } catch { #expect(error.code == .invalidArguments) }

        let metadata = try await bob.shareMetadata(for: url)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.participantPermission == .readWrite)
        #expect(metadata.ownerIdentity.userRecordID?.recordName == adaID.recordName)
        #expect(metadata.hierarchicalRootRecordID?.recordName == trip.recordID.recordName)
        let accepted = try await bob.accept(metadata)
        #expect(accepted.currentUserParticipant?.acceptanceStatus == .accepted)

        let sharedZones = try await bob.sharedDatabase.allRecordZones()
        let sharedZone = try #require(sharedZones.first { $0.zoneID.zoneName == zone.zoneID.zoneName })
        #expect(sharedZone.zoneID.ownerName == adaID.recordName)
        #expect(try await bob.sharedDatabase.databaseChanges(since: nil).modifications.contains(sharedZone.zoneID))
        let sharedFeed = try await bob.sharedDatabase.recordZoneChanges(inZoneWith: sharedZone.zoneID, since: nil)
        #expect(Set(sharedFeed.modifications.map(\.recordID.recordName)).isSuperset(of: [trip.recordID.recordName, stop.recordID.recordName]))
        let rootID = Record.ID(recordName: trip.recordID.recordName, zoneID: sharedZone.zoneID)
        var seen = try await bob.sharedDatabase.record(for: rootID)
        #expect(seen["title"] as? String == "Lisbon in May")
        let children = try await bob.sharedDatabase.records(matching: Query(recordType: "Stop"), inZoneWith: sharedZone.zoneID)
        #expect(try children.matchResults.map { try $0.1.get()["name"] as? String } == ["Belém"])

        seen["title"] = "Lisbon in June"
        try await bob.sharedDatabase.save(seen)
        #expect(try await ada.privateDatabase.record(for: trip.recordID)["title"] as? String == "Lisbon in June")

        // The owner sees Bob as accepted when fetching the share.
        let ownerView = try #require(Share(try await ada.privateDatabase.record(for: share.recordID)))
        #expect(ownerView.participants.contains { $0.acceptanceStatus == .accepted && $0.role == .privateUser })
    }

    @Test func strangerCanRequestAccessOnlyWhereAllowed() async throws {
        let ada = server.ada
        let zone = try await ada.privateDatabase.save(RecordZone(zoneName: unique("private")))
        let root = Record(recordType: "Doc", recordID: Record.ID(recordName: unique("doc"), zoneID: zone.zoneID))
        var share = Share(rootRecord: root)
        share.allowsAccessRequests = true
        let result = try await ada.privateDatabase.modifyRecords(saving: [root, share.record], deleting: [])
        let url = try #require(Share(try result.saveResults[share.recordID]!.get())?.url)

        let metadata = try await server.bob.shareMetadata(for: url)
        #expect(metadata.participantStatus == .unknown)
        #expect(metadata.allowsAccessRequests)
        #expect(metadata.share == nil)
        try await server.bob.requestShareAccess(for: [url])

        let missing = URL(string: "\(server.serverURL.absoluteString)/share/AAAAAAAAAAAAAAAAAAAAAAAAAA")!
        let error = await #expect(throws: TandemError.self) { try await server.bob.requestShareAccess(for: [missing]) }
        #expect(error?.code == .partialFailure)
        #expect(error?.partialErrorsByItemID[.shareURL(missing.absoluteString)]?.code == .unknownItem)
    }

    @Test func acceptingAnInvitationMeantForSomeoneElseMayNeedVerification() async throws {
        let ada = server.ada
        let zone = try await ada.privateDatabase.save(RecordZone(zoneName: unique("carol")))
        let root = Record(recordType: "Doc", recordID: Record.ID(recordName: unique("doc"), zoneID: zone.zoneID))
        var share = Share(rootRecord: root)
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "carol@example.com")))
        let result = try await ada.privateDatabase.modifyRecords(saving: [root, share.record], deleting: [])
        let url = try #require(Share(try result.saveResults[share.recordID]!.get())?.url)

        let metadata = try await server.bob.shareMetadata(for: url)
        #expect(metadata.share == nil)
        #expect(metadata.participantStatus == .unknown)
        let error = await #expect(throws: TandemError.self) { try await server.bob.accept(metadata) }
        #expect(error?.code == .participantMayNeedVerification)
    }
}
