import Foundation
import TandemTestSupport
import Testing
import Tandem

/// What a late joiner receives (D36): the activity, the participants, every journal attachment
/// and the state store — and no past messages. Journal rules (D37).
@Suite struct GroupSessionLateJoinerTests {
    let server = SessionServer.shared

    struct Canvas: Codable, Sendable, Equatable {
        var rows: [String]
    }

    @Test func lateJoinerGetsActivityParticipantsJournalAndStateButNoPastMessages() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        let messengers = sessions.map { GroupSessionMessenger(session: $0) }
        try await sessions[0].join()
        try await sessions[1].join()
        let early = Inbox<Ping>(messengers[1])
        try await messengers[0].send(Ping(sender: 0, number: 1))
        try await early.wait(for: 1)
        let picture = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        let journal = GroupSessionJournal(session: sessions[0])
        let attachment = try await journal.add(picture, metadata: ["name": "picture.bin"])
        try await sessions[0].stateStore.set(Canvas(rows: ["#.", ".#"]), forKey: "canvas")
        try await sessions[1].setActivity(Sketch(canvas: "changed"))

        let late = Inbox<Ping>(messengers[2])
        try await sessions[2].join()
        #expect(try sessions[2].activity() == Sketch(canvas: "changed"))
        #expect(sessions[2].activeParticipants.count == 3)
        #expect(sessions[2].activeParticipants.contains(sessions[0].localParticipant!))
        #expect(sessions[2].stateStore.value(forKey: "canvas", as: Canvas.self) == Canvas(rows: ["#.", ".#"]))
        let lateJournal = GroupSessionJournal(session: sessions[2])
        let listed = lateJournal.current
        #expect(listed.map(\.id) == [attachment.id])
        #expect(try await listed[0].load() == picture)
        #expect(try listed[0].loadMetadata(of: [String: String].self) == ["name": "picture.bin"])

        try await messengers[0].send(Ping(sender: 0, number: 2))
        try await late.wait(for: 1)
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(late.messages == [Ping(sender: 0, number: 2)])
        // Everyone already in the session saw the newcomer.
        try await withTimeout(10) {
            for await participants in sessions[0].activeParticipantsUpdates() where participants.count == 3 { return }
        }
        _ = clients
    }

    @Test func journalIsSharedRemovableByAnyoneAndOutlivesItsUploader() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        for session in sessions { try await session.join() }
        let journals = sessions.map { GroupSessionJournal(session: $0) }
        let lists = journals[2].attachments
        let first = try await journals[0].add(Data("one".utf8))
        let second = try await journals[0].add(Data("two".utf8), metadata: ["n": 2])
        try await withTimeout(10) { for await list in lists where list.count == 2 { return } }
        await sessions[0].leave()
        // The uploader left; the attachments stay, and another participant removes one.
        #expect(try await journals[1].current.first { $0.id == second.id }!.load() == Data("two".utf8))
        try await journals[1].remove(attachment: first)
        try await withTimeout(10) {
            for await list in GroupSessionJournal(session: sessions[2]).attachments where list.map(\.id) == [second.id] { return }
        }
        await #expect { try await first.load() } throws: { ($0 as? TandemError)?.code == .unknownItem }
        // When the last participant leaves, the attachments are gone (D37).
        await sessions[1].leave()
        await sessions[2].leave()
        await #expect { try await second.load() } throws: { ($0 as? TandemError)?.code == .unknownItem }
        _ = clients
    }

    @Test func stateStoreChangesReachTheOthers() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        for session in sessions { try await session.join() }
        let updates = sessions[1].stateStore.updates()
        try await sessions[0].stateStore.set(42, forKey: "score")
        _ = try await withTimeout(10) {
            for await key in updates where key == "score" { return key }
            throw TestFailure("no update")
        }
        #expect(sessions[1].stateStore.value(forKey: "score", as: Int.self) == 42)
        try await sessions[0].stateStore.removeValue(forKey: "score")
        try await withTimeout(10) { while sessions[1].stateStore.keys.contains("score") { try await Task.sleep(nanoseconds: 10_000_000) } }
        _ = clients
    }
}
