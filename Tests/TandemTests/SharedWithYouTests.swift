import Foundation
import Synchronization
import Testing
import Tandem
import TandemTestSupport

/// Shared with You through the SDK against a real server: conversations, the highlight center
/// with live snapshots, custom collaboration through the coordinator, notices, and membership
/// sync (issue 8 scenarios 1–3 from the client's side).
@Suite("SharedWithYou SDK")
struct SharedWithYouTests {
    let server = TestServer.shared

    struct Account {
        let recordName: String
        let email: String
        let container: Container
    }

    func account(_ name: String) throws -> Account {
        let email = "\(unique(name).lowercased())@example.com"
        let added = try server.addUser(email: email, name: name.capitalized)
        return Account(recordName: added.recordName, email: email, container: server.container(token: added.token))
    }

    /// Registers a fresh app whose association file opens every path of its domain.
    func app() throws -> (app: String, domain: String) {
        let tag = UUID().uuidString.prefix(8).lowercased()
        let app = "ABCDE12345.com.example.\(tag)", domain = "\(tag).example.com"
        try TandemProcess.admin(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)", "--data", server.dataDirectory])
        let path = NSTemporaryDirectory() + "aasa-" + UUID().uuidString
        ExitCleanup.removeAtExit(path)
        try Data(#"{"applinks": {"details": [{"appIDs": ["\#(app)"], "components": [{"/": "/*"}]}]}}"#.utf8).write(to: URL(fileURLWithPath: path))
        try TandemProcess.admin(["links", "upload", domain, path, "--container", TestServer.container, "--data", server.dataDirectory])
        return (app, domain)
    }

    @Test func highlightCenterListsPushesHidesAndReportsAuthorization() async throws {
        let (ada, bob, cat) = (try account("ada"), try account("bob"), try account("cat"))
        let (appID, domain) = try app()
        try await ada.container.conversations.modifyContacts(add: [bob.email, cat.email])
        let chat = try await bob.container.conversations.create(with: [ada.recordName, cat.recordName], title: "Books")
        #expect(chat.isGroup)
        let center = HighlightCenter(container: ada.container, appID: appID)
        #expect(center.authorizationState == .unknown)
        #expect(try await center.fetchHighlights().isEmpty)
        #expect(center.authorizationState == .allowed)

        // Live snapshots: the first is the current (empty) list, the next carries the new link.
        let snapshots = Mutex<[[Highlight]]>([])
        let listener = Task {
            for try await list in center.highlightUpdates { snapshots.withLock { $0.append(list) } }
        }
        defer { listener.cancel() }
        try await waitUntil { snapshots.withLock { !$0.isEmpty } }
        let one = URL(string: "https://\(domain)/books/1")!, two = URL(string: "https://\(domain)/books/2")!
        try await bob.container.conversations.send("read \(one)", in: chat.id)
        try await cat.container.conversations.send("also", links: [LinkAttachment(url: two, title: "Book two")], in: chat.id)
        try await bob.container.conversations.send("nothing for the app: https://elsewhere.example.net/x", in: chat.id)
        try await waitUntil { snapshots.withLock { $0.last?.map(\.url) == [two, one] } }

        let list = try await center.fetchHighlights()
        #expect(list.map(\.url) == [two, one])
        #expect(list[0].attributions.first?.sender == cat.recordName)
        #expect(list[0].attributions.first?.title == "Book two")
        #expect(list[1].attributions.first?.conversationID == chat.id)
        #expect(try await center.highlight(for: one).url == one)

        try await center.recordInteraction(with: list[1], context: .detail)
        #expect(try await center.fetchHighlights().first?.isSuggested == true)
        try await center.hide(list[0])
        #expect(try await center.fetchHighlights().map(\.url) == [one])
        try await bob.container.conversations.modifyContacts(add: [cat.email])
        #expect(try await HighlightCenter(container: bob.container, appID: appID).fetchHighlights().map(\.url) == [two])

        try await ada.container.conversations.setConsent(false, for: .app(appID))
        #expect(try await center.fetchHighlights().isEmpty)
        #expect(center.authorizationState == .deniedForApp)
        do {
            _ = try await center.highlight(for: one)
            Issue.record("a hidden app has no highlights")
        } catch {
            #expect(error.code == .unknownItem)
        }
    }

    @MainActor
    final class Badger: HighlightCenterDelegate {
        var calls = 0
        var lastURLs: [URL] = []
        func highlightCenterHighlightsDidChange(_ highlightCenter: HighlightCenter) {
            calls += 1
            lastURLs = highlightCenter.highlights.map(\.url)
        }
    }

    @Test @MainActor func delegateIsToldOfEveryNewSnapshot() async throws {
        let (ada, bob) = (try account("ada"), try account("bob"))
        let (appID, domain) = try app()
        try await ada.container.conversations.modifyContacts(add: [bob.email])
        let chat = try await bob.container.conversations.create(with: [ada.email])
        let center = HighlightCenter(container: ada.container, appID: appID)
        let badger = Badger()
        center.delegate = badger
        try await waitUntilMain { badger.calls >= 1 }
        let url = URL(string: "https://\(domain)/shelf/1")!
        try await bob.container.conversations.send("\(url)", in: chat.id)
        try await waitUntilMain { badger.lastURLs == [url] }
        #expect(center.highlights.map(\.url) == [url])
        center.delegate = nil
    }

    /// Query values keep their `+` (the server reads `+` in a query as a space): a highlight
    /// whose URL has one is found by `highlight(for:)`, and so is a collaboration identifier.
    @Test func highlightLookupKeepsPlusSigns() async throws {
        let (ada, bob) = (try account("ada"), try account("bob"))
        let (appID, domain) = try app()
        try await ada.container.conversations.modifyContacts(add: [bob.email])
        let chat = try await bob.container.conversations.create(with: [ada.recordName])
        let url = URL(string: "https://\(domain)/c++/a+b?q=x+y&r=1")!
        try await bob.container.conversations.send("look \(url)", in: chat.id)
        let center = HighlightCenter(container: ada.container, appID: appID)
        #expect(try await center.fetchHighlights().map(\.url) == [url])
        #expect(try await center.highlight(for: url).url == url)
    }

    @Test func conversationsClientPagesHistoryAndStreamsEvents() async throws {
        let (ada, bob) = (try account("ada"), try account("bob"))
        let chat = try await ada.container.conversations.create(with: [bob.email])
        #expect(!chat.isGroup)
        let events = Mutex<[ConversationEvent]>([])
        let listener = Task { for try await event in bob.container.conversations.events { events.withLock { $0.append(event) } } }
        defer { listener.cancel() }
        // Events are not replayed: wait until Bob's stream is connected, by a message in another
        // conversation that he hears (a busy machine may take a while to connect).
        let warmup = try await ada.container.conversations.create(with: [bob.email], group: true)
        for attempt in 0..<60 where events.withLock({ $0.isEmpty }) {
            _ = try await ada.container.conversations.send("ping \(attempt)", in: warmup.id)
            try await Task.sleep(nanoseconds: 500_000_000)
        }
        try #require(events.withLock { !$0.isEmpty }, "Bob's event stream never connected")
        for index in 1...3 { try await ada.container.conversations.send("message \(index) https://example.org/\(index)", in: chat.id) }
        try await waitUntil { events.withLock { $0.filter { $0.conversationID == chat.id }.count >= 3 } }
        #expect(events.withLock { $0.filter { $0.conversationID == chat.id }.map(\.text) }
            == ["message 1 https://example.org/1", "message 2 https://example.org/2", "message 3 https://example.org/3"])
        let first = try await bob.container.conversations.messages(in: chat.id, limit: 2)
        #expect(first.events.count == 2 && first.moreComing)
        let rest = try await bob.container.conversations.messages(in: chat.id, after: first.continuationMarker, limit: 2)
        // The first page holds bob's memberAdded event and message 1.
        #expect(first.events.map(\.kind) == [.memberAdded, .message])
        #expect(rest.events.map(\.text) == ["message 2 https://example.org/2", "message 3 https://example.org/3"])
        #expect(rest.events.last?.links.first?.url == URL(string: "https://example.org/3"))
        do {
            try await ada.container.conversations.addMember(bob.email, to: "no-such-conversation")
            Issue.record("unknown conversation")
        } catch {
            #expect(error.code == .unknownItem)
        }
    }

    /// Answers actions as the test says, recording what it saw.
    final class Handler: CollaborationActionHandler, @unchecked Sendable {
        let url: URL
        let identifier: String
        var failStart = false
        let lock = NSLock()
        var starts: [CollaborationMetadata] = []
        var updates: [(added: [Person.Identity], removed: [Person.Identity])] = []

        init(url: URL, identifier: String) {
            self.url = url
            self.identifier = identifier
        }

        func collaborationCoordinator(_ coordinator: CollaborationCoordinator, handle action: StartCollaborationAction) {
            lock.withLock { starts.append(action.collaborationMetadata) }
            if lock.withLock({ failStart }) { action.fail() } else { action.fulfill(using: url, collaborationIdentifier: identifier) }
        }

        func collaborationCoordinator(_ coordinator: CollaborationCoordinator, handle action: UpdateCollaborationParticipantsAction) {
            lock.withLock { updates.append((action.addedIdentities, action.removedIdentities)) }
            action.fulfill()
        }
    }

    @Test func customCollaborationNoticesMentionsAndMembershipSync() async throws {
        let (ada, bob, cat, dan) = (try account("ada"), try account("bob"), try account("cat"), try account("dan"))
        let (appID, domain) = try app()
        try await bob.container.conversations.modifyContacts(add: [ada.email])
        try await cat.container.conversations.modifyContacts(add: [ada.email])
        let chat = try await ada.container.conversations.create(with: [bob.recordName, cat.recordName])
        let identifier = "doc-\(UUID().uuidString)"
        let handler = Handler(url: URL(string: "https://\(domain)/docs/\(identifier)")!, identifier: identifier)
        let coordinator = CollaborationCoordinator(container: ada.container)
        coordinator.actionHandler = handler

        // A failed start action cancels the message.
        handler.lock.withLock { handler.failStart = true }
        let options = CollaborationShareOptions(optionsGroups: [.picker(CollaborationOptionsPickerGroup(identifier: "access", options: [
            CollaborationOption(title: "Can make changes", identifier: "rw"), CollaborationOption(title: "Read only", identifier: "ro")]))])
        let metadata = CollaborationMetadata(localIdentifier: "local-1", title: "Plan", contentType: "com.example.plan", defaultShareOptions: options)
        do {
            try await coordinator.send(metadata, in: chat.id)
            Issue.record("the start action failed")
        } catch {
            #expect(error.code == .operationCancelled)
        }
        #expect(try await ada.container.conversations.messages(in: chat.id).events.allSatisfy { $0.kind != .message })

        handler.lock.withLock { handler.failStart = false }
        let sent = try await coordinator.send(metadata, text: "our plan", in: chat.id)
        #expect(sent.collaborationIdentifier == identifier)
        #expect(handler.lock.withLock { handler.starts.last?.userSelectedShareOptions } == options)
        let firstUpdate = try #require(handler.lock.withLock { handler.updates.first })
        #expect(firstUpdate.added.count == 2)  // bob and cat
        #expect(try await ada.container.collaborationIdentities(identifier).filter { $0.state == .active }.count == 2)

        // Bob's app sees a collaboration highlight.
        let bobCenter = HighlightCenter(container: bob.container, appID: appID)
        let highlight = try await bobCenter.collaborationHighlight(forIdentifier: identifier)
        #expect(highlight.title == "Plan")
        #expect(highlight.contentType == "com.example.plan")
        #expect(highlight.owner == ada.recordName)
        #expect(try await bobCenter.collaborationHighlight(for: handler.url).collaborationIdentifier == identifier)

        // Notices: edit and rename reach the conversation; a mention by identity only cat.
        let adaCenter = HighlightCenter(container: ada.container, appID: appID)
        try await adaCenter.postNotice(for: HighlightChangeEvent(highlight: highlight, trigger: .edit))
        try await adaCenter.postNotice(for: HighlightPersistenceEvent(highlight: highlight, trigger: .renamed))
        let identities = try await ada.container.identities(for: [cat.recordName], inCollaboration: identifier)
        let catIdentity = try #require(identities[cat.recordName])
        try await adaCenter.postNotice(for: HighlightMentionEvent(highlight: highlight, mentionedPersonIdentity: catIdentity))
        let catCenter = HighlightCenter(container: cat.container, appID: appID)
        #expect(try await catCenter.notices(for: highlight).compactMap(\.notice?.event) == ["change", "persistence", "mention"])
        let bobNotices = try await bobCenter.notices(for: highlight)
        #expect(bobNotices.compactMap(\.notice?.triggerName) == ["edit", "renamed"])
        #expect(bobNotices.allSatisfy { $0.actor == ada.recordName })
        try await bobCenter.clearNotices(for: highlight)
        #expect(try await bobCenter.notices(for: highlight).isEmpty)

        // Dan joins: one prompt for the owner; accepting runs a participants update adding him.
        try await bob.container.conversations.addMember(dan.email, to: chat.id)
        let prompts = try await ada.container.conversations.membershipPrompts()
        #expect(prompts.count == 1)
        #expect(prompts.first?.collaborationIdentifiers == [identifier])
        #expect(prompts.first?.message == "Add Dan to your shared document")
        let answered = try await coordinator.respond(to: try #require(prompts.first), accept: true)
        #expect(answered.state == .accepted)
        #expect(handler.lock.withLock { handler.updates.last?.added.count } == 1)
        #expect(try await ada.container.collaborationIdentities(identifier).filter { $0.state == .active }.count == 3)

        // Cat leaves: accepting removes the identity issued to her.
        try await cat.container.conversations.removeMember(cat.recordName, from: chat.id)
        let leaving = try #require(try await ada.container.conversations.membershipPrompts().first)
        #expect(leaving.change == .remove)
        try await coordinator.respond(to: leaving, accept: true)
        #expect(handler.lock.withLock { handler.updates.last?.removed } == [catIdentity])
        #expect(try await ada.container.collaborationIdentities(identifier).filter { $0.state == .active }.count == 2)
    }
}

/// Polls `condition` on the main actor for up to 10 seconds.
@MainActor
func waitUntilMain(_ condition: () -> Bool) async throws {
    for _ in 0..<500 {
        if condition() { return }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    throw TestFailure("condition not met within 10 s")
}

/// Polls `condition` for up to 10 seconds.
func waitUntil(_ condition: @escaping @Sendable () -> Bool) async throws {
    for _ in 0..<500 {
        if condition() { return }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    throw TestFailure("condition not met within 10 s")
}
