import Foundation
import Testing
import Tandem
import TandemTestSupport

/// Limits, each a typed error: 256 KiB per message (D32), 32 participants (D33), the
/// per-participant rate (G6), 100 MiB per journal attachment (D37); and a participant that
/// stops reading loses only its own unreliable traffic.
@Suite struct GroupSessionLimitTests {
    let server = SessionServer.shared

    @Test(arguments: [GroupSessionMessenger.DeliveryMode.reliable, .unreliable])
    func messageOver256KiBIsRefused(_ mode: GroupSessionMessenger.DeliveryMode) async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        for session in sessions { try await session.join() }
        let messenger = GroupSessionMessenger(session: sessions[0], deliveryMode: mode)
        let inbox = Inbox<Data>(GroupSessionMessenger(session: sessions[1], deliveryMode: mode))
        await #expect { try await messenger.send(Data(count: 257 << 10)) } throws: { ($0 as? TandemError)?.code == .messageTooLarge }
        try await messenger.send(Data(count: 256 << 10))
        try await inbox.wait(for: 1)
        #expect(inbox.messages.map(\.count) == [256 << 10])
        _ = clients
    }

    @Test func thirtyThirdParticipantIsRefused() async throws {
        let (conversation, clients, sessions) = try await startSession(server, users: [0, 1])
        var joined: [GroupSession<Sketch>] = [sessions[0]]
        try await sessions[0].join()
        var extra: [Container] = []
        for _ in 0..<32 {
            let client = server.container(1)
            extra.append(client)
            joined.append(try await session(Sketch.self, in: conversation, on: client.groupActivities))
        }
        for session in joined.prefix(32).dropFirst() { try await session.join() }
        await #expect { try await joined[32].join() } throws: { ($0 as? TandemError)?.code == .tooManyParticipants }
        #expect(joined[31].activeParticipants.count == 32)
        // Each join got its own participant ID (D34).
        #expect(Set(joined.prefix(32).compactMap(\.localParticipant)).count == 32)
        _ = (clients, extra)
    }

    @Test func journalAttachmentOver100MiBIsRefused() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        for session in sessions { try await session.join() }
        let journal = GroupSessionJournal(session: sessions[0])
        await #expect { try await journal.add(Data(count: (100 << 20) + 1)) } throws: { ($0 as? TandemError)?.code == .limitExceeded }
        #expect(journal.current.isEmpty)
        let full = try await journal.add(Data(count: 100 << 20))
        #expect(full.size == 100 << 20)
        _ = clients
    }

    @Test func participantThatStopsReadingLosesOnlyItsUnreliableTraffic() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        try await sessions[0].join()
        try await sessions[1].join()
        let droppedBefore = try await server.droppedMessages()
        // A stream peer that joins with one raw frame and then never reads again.
        let stalled = try StalledWebSocket(port: server.server.port, path: "/stream/1/\(SessionServer.container)/development", token: server.tokens[2])
        try stalled.send(text: #"{"type":"session.join","id":1,"sessionID":"\#(sessions[0].id.uuidString)"}"#)
        try await withTimeout(10) {
            for await participants in sessions[0].activeParticipantsUpdates() where participants.count == 3 { return }
        }
        let strokes = GroupSessionMessenger(session: sessions[0], deliveryMode: .unreliable)
        let inbox = Inbox<Data>(GroupSessionMessenger(session: sessions[1], deliveryMode: .unreliable))
        let stroke = Data(count: 16 << 10)
        // Batches the reading participant keeps up with, so only the stalled one falls behind.
        for batch in 1...20 {
            for _ in 0..<100 { try await strokes.send(stroke) }
            try await inbox.wait(for: batch * 100, seconds: 30)
        }
        let dropped = try await server.droppedMessages() - droppedBefore
        #expect(dropped > 0, "the stalled participant's unreliable messages were dropped")
        #expect(dropped < 2000)
        // The stalled participant is still in the session and its connection is open.
        #expect(stalled.isOpen)
        #expect(sessions[0].activeParticipants.count == 3)
        let final = Inbox<Ping>(GroupSessionMessenger(session: sessions[1]))
        try await GroupSessionMessenger(session: sessions[0]).send(Ping(sender: 0, number: 1), to: .only(sessions[1].localParticipant!))
        try await final.wait(for: 1)
        _ = clients
    }
}

/// Limits that need their own server settings: the rate limit and a conversation too big for a session.
@Suite struct GroupSessionConfiguredLimitTests {
    /// nil when sent, else the error's code.
    static func attempt(_ messenger: GroupSessionMessenger, _ number: Int) async -> TandemError.Code? {
        do {
            try await messenger.send(Ping(sender: 0, number: number))
            return nil
        } catch {
            return error.code
        }
    }

    @Test func rateLimitIsATypedErrorAndConversationFullIsAReason() async throws {
        // A rate of 1/s after a burst of 20: the 100 sends below overrun it however slowly this
        // machine sends them (at 20/s a loaded machine sending one per 50 ms never hit the limit).
        let server = try SessionServer(users: 3, extraArguments: ["--session-rate", "1", "--session-burst", "20",
                                                                  "--session-participant-limit", "2"])
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        for session in sessions { try await session.join() }
        let messenger = GroupSessionMessenger(session: sessions[0])
        var refused = 0
        var sent = 0
        for number in 0..<100 {
            let outcome = await Self.attempt(messenger, number)
            if outcome == .requestRateLimited { refused += 1 } else if outcome == nil { sent += 1 }
            if refused > 0 { break }
        }
        #expect(refused > 0)
        #expect(sent >= 20)
        // Three members with a limit of two: the conversation is full (D33, D35).
        let big = try await server.conversation(0, with: [1, 2])
        let client = server.container(0).groupActivities
        try await client.setActiveConversation(big)
        #expect(try await GroupStateObserver(client).eligibility().reason == .conversationFull)
        await #expect { try await Sketch(canvas: "big").activate(on: client) } throws: { ($0 as? TandemError)?.code == .tooManyParticipants }
        _ = clients
    }
}
