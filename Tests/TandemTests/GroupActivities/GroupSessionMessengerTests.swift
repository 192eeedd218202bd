import Foundation
import TandemTestSupport
import Testing
import Tandem

/// The messenger (SharePlay: `GroupSessionMessenger`): one reliable order per session, never
/// back to the sender (D30, D31), by type, to all or chosen participants.
@Suite struct GroupSessionMessengerTests {
    let server = SessionServer.shared

    @Test func threeSendersThousandReliableEachOneOrderForAll() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2, 3])
        let messengers = sessions.map { GroupSessionMessenger(session: $0) }
        let inboxes = messengers.map { Inbox<Ping>($0) }
        for session in sessions { try await session.join() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<3 {
                group.addTask {
                    for number in 0..<1000 { try await messengers[sender].send(Ping(sender: sender, number: number)) }
                }
            }
            try await group.waitForAll()
        }
        try await inboxes[3].wait(for: 3000, seconds: 60)
        for sender in 0..<3 { try await inboxes[sender].wait(for: 2000, seconds: 60) }
        let everything = inboxes[3].received
        #expect(everything.count == 3000)
        // One server order: increasing sequence numbers, each sender's messages in its order.
        #expect(zip(everything, everything.dropFirst()).allSatisfy { $0.1.sequence < $1.1.sequence })
        for sender in 0..<3 {
            #expect(everything.map(\.0).filter { $0.sender == sender }.map(\.number) == Array(0..<1000))
            // Each sender sees the same order, minus its own messages (D30).
            let seen = inboxes[sender].messages
            #expect(seen.count == 2000)
            #expect(!seen.contains { $0.sender == sender })
            #expect(seen == everything.map(\.0).filter { $0.sender != sender })
        }
        #expect(Set(everything.map(\.1.source)) == Set(sessions.prefix(3).map { $0.localParticipant! }))
        _ = clients
    }

    struct Note: Codable, Sendable, Equatable, CustomMessageIdentifiable {
        static let messageIdentifier = "note.v1"
        var text: String
    }

    @Test func receiversSubscribeByTypeAndChosenParticipantsOnly() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        let messengers = sessions.map { GroupSessionMessenger(session: $0) }
        let notes = messengers.map { Inbox<Note>($0) }
        let pings = messengers.map { Inbox<Ping>($0) }
        let raw = messengers.map { Inbox<Data>($0) }
        for session in sessions { try await session.join() }
        try await messengers[0].send(Note(text: "to 1 only"), to: .only(sessions[1].localParticipant!))
        try await messengers[0].send(Data([1, 2, 3]))
        try await messengers[0].send(Ping(sender: 0, number: 7))
        try await pings[2].wait(for: 1)
        try await pings[1].wait(for: 1)
        try await raw[1].wait(for: 1)
        try await raw[2].wait(for: 1)
        #expect(notes[1].messages == [Note(text: "to 1 only")])
        #expect(notes[2].count == 0)
        #expect(raw[2].messages == [Data([1, 2, 3])])
        #expect(notes[0].count + pings[0].count + raw[0].count == 0)
        _ = clients
    }

    @Test func unreliableMessagesArriveInSenderOrder() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        let sender = GroupSessionMessenger(session: sessions[0], deliveryMode: .unreliable)
        let inbox = Inbox<Ping>(GroupSessionMessenger(session: sessions[1], deliveryMode: .unreliable))
        for session in sessions { try await session.join() }
        for number in 0..<200 { try await sender.send(Ping(sender: 0, number: number)) }
        try await sender.send(Ping(sender: 0, number: -1))
        try await withTimeout(20) { while !inbox.messages.contains(where: { $0.number == -1 }) { try await Task.sleep(nanoseconds: 10_000_000) } }
        let numbers = inbox.messages.map(\.number).filter { $0 >= 0 }
        #expect(numbers == numbers.sorted())
        #expect(inbox.received.allSatisfy { $0.1.sequence == 0 })
        _ = clients
    }
}
