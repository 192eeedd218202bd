import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Tandem
import TandemTestSupport

/// Issue 23 items 1 and 8 through the SDK against a real server: *Collaborate* vs *Send copy*
/// when a share's URL is sent into a conversation, and collaboration metadata kept fresh when
/// the share is renamed (decisions R1–R6). In `SharedWithYouTests` for its accounts and apps.
extension SharedWithYouTests {
    /// A private share (no participants) of a new root record of `owner`, saved; its URL.
    func newShare(of owner: Account, title: String, configure: (inout Share) -> Void = { _ in }) async throws -> (share: Share, url: URL) {
        let zone = try await owner.container.privateDatabase.save(RecordZone(zoneName: unique("trips")))
        let root = Record(recordType: "Trip", recordID: Record.ID(recordName: unique("trip"), zoneID: zone.zoneID))
        var share = Share(rootRecord: root)
        share.title = title
        configure(&share)
        let saved = try await owner.container.privateDatabase.modifyRecords(saving: [root, share.record], deleting: []).savedShare(share)
        return (saved, try #require(saved.url))
    }

    /// The share as its owner fetches it now.
    func current(_ share: Share, of owner: Account) async throws -> Share {
        try #require(Share(try await owner.container.privateDatabase.record(for: share.recordID)))
    }

    /// Whether `person` is invited to (or in) the share at `url`: a stranger to a private share
    /// gets `unknownItem` or status `.unknown` (D7, T8).
    func isInvited(_ person: Account, to url: URL) async throws -> Bool {
        do { return try await person.container.shareMetadata(for: url).participantStatus != .unknown }
        catch where error.code == .unknownItem { return false }
    }

    /// Seed behaviour: sending a share URL only registered a highlight. *Send copy* still does only
    /// that; *Collaborate* makes both other members invited participants with the chosen
    /// permission, and each accepts as any invitee.
    @Test func collaborateInvitesEveryMemberWhileSendCopyInvitesNobody() async throws {
        let (ada, bob, cat) = (try account("ada"), try account("bob"), try account("cat"))
        let (share, url) = try await newShare(of: ada, title: "Lisbon")
        let chat = try await ada.container.conversations.create(with: [bob.recordName, cat.recordName], title: "Trip")

        try await ada.container.conversations.send("a copy \(url)", in: chat.id)
        try await ada.container.conversations.send("another copy \(url)", in: chat.id, mode: .sendCopy)
        #expect(try await current(share, of: ada).participants.map(\.role) == [.owner])
        #expect(try await isInvited(bob, to: url) == false)

        try await ada.container.conversations.send("plan with me \(url)", in: chat.id, mode: .collaborate(permission: .readOnly))
        let invited = try await current(share, of: ada).participants.filter { $0.role == .privateUser }
        #expect(Set(invited.compactMap(\.userIdentity.userRecordID?.recordName)) == [bob.recordName, cat.recordName])
        #expect(invited.allSatisfy { $0.acceptanceStatus == .pending && $0.permission == .readOnly })

        for person in [bob, cat] {
            let metadata = try await person.container.shareMetadata(for: url)
            #expect(metadata.participantStatus == .pending)
            #expect(metadata.participantPermission == .readOnly)
            #expect(try await person.container.accept(metadata).currentUserParticipant?.acceptanceStatus == .accepted)
        }
        // Collaborating again invites nobody twice and changes no one's acceptance.
        try await ada.container.conversations.send("again \(url)", in: chat.id, mode: .collaborate())
        let after = try await current(share, of: ada).participants.filter { $0.role == .privateUser }
        #expect(after.count == 2 && after.allSatisfy { $0.acceptanceStatus == .accepted && $0.permission == .readOnly })
    }

    /// Seed behaviour: anyone could send a share URL. *Collaborate* by a participant who may not
    /// add people (a `USER`, not an administrator) is refused, and the message is not sent;
    /// without a share URL it is refused as malformed.
    @Test func collaborateWithoutInviteRightsIsRefusedAndSendsNothing() async throws {
        let (ada, bob, cat) = (try account("ada"), try account("bob"), try account("cat"))
        let (share, url) = try await newShare(of: ada, title: "Porto") {
            $0.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: bob.email), permission: .readWrite))
        }
        _ = try await bob.container.accept(try await bob.container.shareMetadata(for: url))
        let chat = try await bob.container.conversations.create(with: [cat.recordName])

        do {
            try await bob.container.conversations.send("join \(url)", in: chat.id, mode: .collaborate())
            Issue.record("a participant without invite rights invited people")
        } catch { #expect(error.code == .permissionFailure) }
        do {
            try await bob.container.conversations.send("no link here", in: chat.id, mode: .collaborate())
            Issue.record("collaborate without a share URL was accepted")
        } catch { #expect(error.code == .invalidArguments) }
        #expect(try await cat.container.conversations.messages(in: chat.id).events.allSatisfy { $0.kind != .message })
        #expect(try await current(share, of: ada).participants.count == 2)
        #expect(try await isInvited(cat, to: url) == false)
    }

    /// Seed behaviour: a collaboration highlight kept the title the share had when its URL was
    /// first sent. Renaming the share (its `cloudkit.title`) renames the highlight another
    /// member sees and posts a `renamed` notice; the typed thumbnail and type round-trip and
    /// appear on the share page and in the highlight.
    @Test func renamingAShareRenamesItsHighlightAndTypedMetadataRoundTrips() async throws {
        let (ada, bob) = (try account("ada"), try account("bob"))
        let (appID, _) = try app()
        try await bob.container.conversations.modifyContacts(add: [ada.email])
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 24))
        let (share, url) = try await newShare(of: ada, title: "Lisbon") {
            $0.type = "com.example.trip"
            $0.thumbnailImageData = png
            $0.publicPermission = .readOnly
        }
        let chat = try await ada.container.conversations.create(with: [bob.recordName])
        try await ada.container.conversations.send("look \(url)", in: chat.id)
        let center = HighlightCenter(container: bob.container, appID: appID)
        let before = try await center.collaborationHighlight(for: url)
        #expect(before.title == "Lisbon")
        #expect(before.contentType == "com.example.trip")

        var renamed = try await current(share, of: ada)
        #expect(renamed.thumbnailImageData == png)
        #expect(renamed.type == "com.example.trip")
        renamed.title = "Lisbon in May"
        _ = try await ada.container.privateDatabase.modifyRecords(saving: [renamed.record], deleting: []).savedShare(renamed)
        let after = try await center.collaborationHighlight(for: url)
        #expect(after.title == "Lisbon in May")
        #expect(after.contentType == "com.example.trip")
        let notice = try #require(try await center.notices(for: after).last?.notice)
        #expect(notice.event == "persistence" && notice.triggerName == "renamed" && notice.title == "Lisbon in May")

        let (page, _) = try await URLSession.shared.data(from: url)
        let html = String(decoding: page, as: UTF8.self)
        #expect(html.contains("<h1>Lisbon in May</h1>"))
        #expect(html.contains("<p id=\"share-type\">Type: <code>com.example.trip</code></p>"))
        #expect(html.contains("/share/\(url.lastPathComponent)/thumbnail\" alt"))
        let (thumbnail, response) = try await URLSession.shared.data(from: url.appendingPathComponent("thumbnail"))
        #expect(thumbnail == png)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "image/png")
    }
}
