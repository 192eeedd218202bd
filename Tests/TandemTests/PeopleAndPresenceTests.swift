import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import Tandem
import TandemTestSupport

/// Issue 23 items 6 and 7 through the SDK against a real server: who has a collaboration open
/// (decisions R27–R30), and people's names and faces where others meet them (R31–R33). In
/// `SharedWithYouTests` for its accounts and apps.
extension SharedWithYouTests {
    /// GET without credentials, as an image view would: the status.
    func status(of url: URL) async throws -> Int {
        let (_, response) = try await URLSession.shared.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Ada owns a share she sent with *Collaborate* into a group conversation with Bob, who
    /// accepted it; Bob's highlight of it.
    func collaboration(_ ada: Account, _ bob: Account) async throws -> (share: Share, url: URL, chat: Conversation, highlight: CollaborationHighlight, appID: String) {
        let (appID, _) = try app()
        try await bob.container.conversations.modifyContacts(add: [ada.email])
        let (share, url) = try await newShare(of: ada, title: "Lisbon")
        let chat = try await ada.container.conversations.create(with: [bob.recordName], title: "Trip", group: true)
        try await ada.container.conversations.send("plan with me \(url)", in: chat.id, mode: .collaborate())
        _ = try await bob.container.accept(try await bob.container.shareMetadata(for: url))
        let highlight = try await HighlightCenter(container: bob.container, appID: appID).collaborationHighlight(for: url)
        return (share, url, chat, highlight, appID)
    }

    /// Seed behaviour: attributions and notices named people by user record name only, and share
    /// participants carried no picture (A48). Now a co-member sees Ada's name and face in all
    /// three; the URLs work while they share something and stop when they no longer do; a
    /// stranger sees neither.
    @Test func coMembersSeeNamesAndFacesInAttributionsParticipantsAndNotices() async throws {
        let (ada, bob, eve) = (try account("ada"), try account("bob"), try account("eve"))
        var names = PersonNameComponents()
        names.givenName = "Ada"
        names.familyName = "Lovelace"
        try await ada.container.setNameComponents(names)
        _ = try await ada.container.setAvatar(AvatarTests.png, contentType: "image/png")
        #expect(try await ada.container.currentUserIdentity().nameComponents?.familyName == "Lovelace")
        let (share, _, chat, highlight, appID) = try await collaboration(ada, bob)

        // Attributions: "Shared by Ada Lovelace", with her picture.
        let center = HighlightCenter(container: bob.container, appID: appID)
        let attribution = try #require(try await center.fetchHighlights().first { $0.collaboration != nil }?.attributions.first)
        #expect(attribution.sender == ada.recordName)
        #expect(attribution.senderIdentity?.nameComponents?.givenName == "Ada")
        #expect(attribution.senderIdentity?.nameComponents?.familyName == "Lovelace")
        let fromAttribution = try #require(attribution.senderIdentity?.avatarURL)
        #expect(try await status(of: fromAttribution) == 200)
        // The same in the live snapshots of the stream WebSocket.
        var live: [Highlight] = []
        for try await list in center.highlightUpdates {
            live = list
            break
        }
        let liveSender = live.first { $0.collaboration != nil }?.attributions.first?.senderIdentity
        #expect(liveSender?.nameComponents?.givenName == "Ada" && liveSender?.avatarURL != nil)

        // Share participants: the owner as Bob sees the share, with her picture.
        let sharedZone = try #require(try await bob.container.sharedDatabase.allRecordZones().first { $0.zoneID.zoneName == share.recordID.zoneID.zoneName })
        let shareID = Record.ID(recordName: share.recordID.recordName, zoneID: sharedZone.zoneID)
        let seen = try #require(Share(try await bob.container.sharedDatabase.record(for: shareID)))
        #expect(seen.owner?.userIdentity.nameComponents?.givenName == "Ada")
        #expect(try await status(of: try #require(seen.owner?.userIdentity.avatarURL)) == 200)

        // Notices: the actor's name and picture.
        _ = try await HighlightCenter(container: ada.container, appID: appID).postNotice(for: HighlightChangeEvent(highlight: highlight, trigger: .edit))
        let notice = try #require(try await center.notices(for: highlight).last)
        #expect(notice.actor == ada.recordName)
        #expect(notice.actorIdentity?.nameComponents?.givenName == "Ada")
        #expect(try await status(of: try #require(notice.actorIdentity?.avatarURL)) == 200)

        // A notice's actor Bob shares nothing with: Cat, invited through another conversation, who
        // never accepted the share (one of its people, so she may post a notice, W14; not a
        // co-member of Bob's, R32), is named by record name only.
        let cat = try account("cat")
        try await cat.container.conversations.modifyContacts(add: [ada.email])
        let other = try await ada.container.conversations.create(with: [cat.recordName], title: "Other trip", group: true)
        try await ada.container.conversations.send("have a look \(try #require(share.url))", in: other.id, mode: .collaborate())
        let catsHighlight = try await HighlightCenter(container: cat.container, appID: appID).collaborationHighlight(for: try #require(share.url))
        _ = try await HighlightCenter(container: cat.container, appID: appID).postNotice(for: HighlightChangeEvent(highlight: catsHighlight, trigger: .comment))
        let fromCat = try #require(try await center.notices(for: highlight).last)
        #expect(fromCat.actor == cat.recordName && fromCat.actorIdentity == nil)

        // A stranger: no name, no picture, no notices.
        let stranger = try await eve.container.userIdentity(for: UserIdentity.LookupInfo(userRecordID: Record.ID(recordName: ada.recordName)))
        #expect(stranger?.nameComponents == nil && stranger?.avatarURL == nil)
        let noNotices = try? await HighlightCenter(container: eve.container, appID: appID).notices(for: highlight)
        #expect(noNotices?.isEmpty ?? true)

        // Once Bob shares nothing with Ada any more, the URL he was given stops working.
        var owned = try await current(share, of: ada)
        for participant in owned.participants where participant.userIdentity.userRecordID?.recordName == bob.recordName {
            owned.removeParticipant(participant)
        }
        _ = try await ada.container.privateDatabase.modifyRecords(saving: [owned.record], deleting: []).savedShare(owned)
        #expect(try await status(of: fromAttribution) == 200, "still in one conversation")
        _ = try await ada.container.conversations.removeMember(bob.recordName, from: chat.id)
        #expect(try await status(of: fromAttribution) == 404)
    }

    /// Seed behaviour: nobody could tell who had a collaboration open. Ada opens it and Bob, a
    /// participant watching, counts her; her connection ending ends it; Eve, a stranger, is
    /// refused as for an unknown collaboration and hears nothing.
    @Test func presenceCountsWhoHasACollaborationOpenAndTellsNoStranger() async throws {
        let (ada, bob, eve) = (try account("ada"), try account("bob"), try account("eve"))
        let (_, url, _, highlight, _) = try await collaboration(ada, bob)
        let id = highlight.collaborationIdentifier
        #expect(id.hasPrefix("share:"))

        let seen = Mutex<[CollaborationPresence]>([])
        let watcher = Task { for try await state in bob.container.collaborationPresence(id, isOpen: false) { seen.withLock { $0.append(state) } } }
        defer { watcher.cancel() }
        try await waitUntil { seen.withLock { $0.last?.activeParticipantCount == 0 } }

        let opener = Task { for try await _ in ada.container.collaborationPresence(id) {} }
        try await waitUntil { seen.withLock { $0.last?.activeParticipantCount == 1 } }
        let present = try #require(seen.withLock { $0.last })
        #expect(present.activeParticipants.compactMap(\.userRecordID?.recordName) == [ada.recordName])
        #expect(present.collaborationIdentifier == id)

        opener.cancel()
        try await waitUntil { seen.withLock { $0.last?.activeParticipantCount == 0 } }

        for asked in [id, "share:no-such-share"] {
            let refused = await #expect(throws: TandemError.self) {
                for try await _ in eve.container.collaborationPresence(asked) { Issue.record("a stranger hears presence") }
            }
            #expect(refused?.code == .unknownItem, "\(String(describing: refused))")
        }
        #expect(seen.withLock { $0.last?.activeParticipantCount } == 0, "the stranger's attempt counted nobody")

        // Holding the share's URL is not being on the share: Eve pastes it into a conversation
        // of her own and is refused all the same.
        let carol = try account("carol")
        try await carol.container.conversations.modifyContacts(add: [eve.email])
        let own = try await eve.container.conversations.create(with: [carol.recordName], title: "Snooping")
        _ = try await eve.container.conversations.send("look \(url)", in: own.id)
        let holder = await #expect(throws: TandemError.self) {
            for try await _ in eve.container.collaborationPresence(id, isOpen: false) {
                Issue.record("a holder of the URL hears presence")
                break
            }
        }
        #expect(holder?.code == .unknownItem, "\(String(describing: holder))")
    }
}
