import Foundation
import Testing
import Tandem

/// Access requests through the SDK (issue 23 item 9; decisions D7, T9, T10, R7): a stranger
/// asks, the owner sees `Share.requesters` and approves, denies, blocks or unblocks.
@Suite("Share access requests")
struct ShareAccessRequestTests {
    let server = TestServer.shared

    /// A new account (email, container, record name).
    func person(_ prefix: String, _ name: String) throws -> (email: String, container: Container, recordName: String) {
        let email = "\(unique(prefix).lowercased())@example.com"
        let (recordName, token) = try server.addUser(email: email, name: name)
        return (email, server.container(token: token), recordName)
    }

    /// Ada's new document shared privately with access requests allowed; returns the share and its root.
    func requestableDocument() async throws -> (share: Share, root: Record) {
        let zone = try await server.ada.privateDatabase.save(RecordZone(zoneName: unique("requests")))
        var root = Record(recordType: "Doc", recordID: Record.ID(recordName: unique("doc"), zoneID: zone.zoneID))
        root["title"] = "Plans"
        var share = Share(rootRecord: root)
        share.allowsAccessRequests = true
        let saved = try await server.ada.privateDatabase.modifyRecords(saving: [root, share.record], deleting: [])
        return (try saved.savedShare(share), root)
    }

    func ownerView(_ share: Share) async throws -> Share {
        try #require(Share(try await server.ada.privateDatabase.record(for: share.recordID)))
    }

    @Test func anApprovedRequesterBecomesAnInviteeWhoAcceptsAndReads() async throws {
        let (share, root) = try await requestableDocument()
        let url = try #require(share.url)
        let rita = try person("rita", "Rita Requester")
        #expect(try await rita.container.shareMetadata(for: url).share == nil)
        try await rita.container.requestShareAccess(for: [url])

        let asked = try await ownerView(share)
        let requester = try #require(asked.requesters.first)
        #expect(asked.requesters.count == 1)
        #expect(requester.userIdentity.userRecordID?.recordName == rita.recordName)
        #expect(requester.participantLookupInfo?.userRecordID?.recordName == rita.recordName)
        #expect(requester.userIdentity.nameComponents?.givenName == "Rita")
        #expect(asked.blockedIdentities.isEmpty)

        // Nobody but the owner and administrators answers requests.
        let bobTries = await #expect(throws: TandemError.self) {
            try await server.bob.approveRequesters(asked.requesters, of: asked)
        }
        #expect(bobTries?.code == .unknownItem)

        let approved = try await server.ada.approveRequesters(asked.requesters, of: asked, permission: .readWrite)
        #expect(approved.requesters.isEmpty)
        let invitee = try #require(approved.participants.first { $0.userIdentity.userRecordID?.recordName == rita.recordName })
        #expect(invitee.acceptanceStatus == .pending)
        #expect(invitee.permission == .readWrite)
        #expect(invitee.isApprovedRequester)

        let metadata = try await rita.container.shareMetadata(for: url)
        #expect(metadata.participantStatus == .pending)
        try await rita.container.accept(metadata)
        let zones = try await rita.container.sharedDatabase.allRecordZones()
        let zone = try #require(zones.first { $0.zoneID.zoneName == root.recordID.zoneID.zoneName })
        let seen = try await rita.container.sharedDatabase.record(for: Record.ID(recordName: root.recordID.recordName, zoneID: zone.zoneID))
        #expect(seen["title"] as? String == "Plans")

        // Approving someone who did not ask is refused.
        let again = await #expect(throws: TandemError.self) {
            try await server.ada.approveRequesters(asked.requesters, of: try await ownerView(share))
        }
        #expect(again?.code == .invalidArguments)
    }

    @Test func deniedRequestersMayAskAgainBlockedOnesCannotUntilUnblocked() async throws {
        let (share, _) = try await requestableDocument()
        let url = try #require(share.url)
        let dora = try person("dora", "Dora Denied")
        try await dora.container.requestShareAccess(for: [url])

        let denied = try await server.ada.denyRequesters(try await ownerView(share).requesters, of: share)
        #expect(denied.requesters.isEmpty)
        #expect(denied.blockedIdentities.isEmpty)
        #expect(!denied.participants.contains { $0.userIdentity.userRecordID?.recordName == dora.recordName })
        // Denied, not blocked: she may ask again.
        try await dora.container.requestShareAccess(for: [url])
        let askedAgain = try await ownerView(share)
        #expect(askedAgain.requesters.map(\.userIdentity.userRecordID?.recordName) == [dora.recordName])

        let blocked = try await server.ada.blockRequesters(askedAgain.requesters, of: askedAgain)
        #expect(blocked.requesters.isEmpty)
        #expect(blocked.blockedIdentities.map(\.userIdentity.userRecordID?.recordName) == [dora.recordName])
        // A blocked person's request is refused as if the share did not exist (T9).
        let refused = await #expect(throws: TandemError.self) { try await dora.container.requestShareAccess(for: [url]) }
        #expect(refused?.partialErrorsByItemID[.shareURL(url.absoluteString)]?.code == .unknownItem)
        #expect(try await ownerView(share).requesters.isEmpty)

        let unblocked = try await server.ada.unblockIdentities(blocked.blockedIdentities, of: blocked)
        #expect(unblocked.blockedIdentities.isEmpty)
        try await dora.container.requestShareAccess(for: [url])
        #expect(try await ownerView(share).requesters.map(\.userIdentity.userRecordID?.recordName) == [dora.recordName])
    }

    @Test func blockingAParticipantRemovesThem() async throws {
        let (share, _) = try await requestableDocument()
        let url = try #require(share.url)
        let pat = try person("pat", "Pat Participant")
        try await pat.container.requestShareAccess(for: [url])
        let approved = try await server.ada.approveRequesters(try await ownerView(share).requesters, of: share)
        try await pat.container.accept(try await pat.container.shareMetadata(for: url))
        let participant = try #require(try await ownerView(approved).participants.first {
            $0.userIdentity.userRecordID?.recordName == pat.recordName
        })
        #expect(participant.acceptanceStatus == .accepted)

        let blocked = try await server.ada.blockRequesters([participant.userIdentity], of: try await ownerView(share))
        #expect(!blocked.participants.contains { $0.userIdentity.userRecordID?.recordName == pat.recordName })
        #expect(blocked.blockedIdentities.map(\.userIdentity.userRecordID?.recordName) == [pat.recordName])
        #expect(try await pat.container.sharedDatabase.allRecordZones().isEmpty)
        let refused = await #expect(throws: TandemError.self) { try await pat.container.requestShareAccess(for: [url]) }
        #expect(refused?.partialErrorsByItemID[.shareURL(url.absoluteString)]?.code == .unknownItem)
    }

    @Test func callsRefuseAnUnsavedShareAndPeopleWithoutAccounts() async throws {
        let root = Record(recordType: "Doc", recordID: Record.ID(recordName: unique("doc"), zoneID: RecordZone.ID(zoneName: unique("z"))))
        let unsaved = Share(rootRecord: root)
        let error = await #expect(throws: TandemError.self) { try await server.ada.denyRequesters([], of: unsaved) }
        #expect(error?.code == .invalidArguments)
        let (share, _) = try await requestableDocument()
        let nobody = await #expect(throws: TandemError.self) { try await server.ada.denyRequesters([], of: share) }
        #expect(nobody?.code == .invalidArguments)
    }
}
