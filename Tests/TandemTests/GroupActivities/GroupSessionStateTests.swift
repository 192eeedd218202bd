import Foundation
import TandemTestSupport
import Testing
import Tandem

/// The session state machine through every invalidation reason (SharePlay: `GroupSession.State`),
/// activation rules and activity changes, on a real server with several SDK clients.
@Suite struct GroupSessionStateTests {
    let server = SessionServer.shared

    @Test func joinLeaveAndEveryoneLeft() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        #expect(sessions.allSatisfy { $0.state == .waiting })
        #expect(sessions[0].isLocallyInitiated && !sessions[1].isLocallyInitiated)
        #expect(try sessions[1].activity() == Sketch(canvas: "A"))
        #expect(sessions[1].metadata.title == "Sketch A" && sessions[1].metadata.type == .createTogether)
        try await sessions[0].join()
        #expect(sessions[0].state == .joined)
        #expect(sessions[0].activeParticipants == [sessions[0].localParticipant!])
        await sessions[0].leave()
        #expect(sessions[0].state == .invalidated(reason: .left))
        // The member who never joined sees the session end once everyone who joined has left.
        try await waitFor(sessions[1], .invalidated(reason: .everyoneLeft))
        _ = clients
    }

    @Test func endedByAParticipantEndsItForEveryone() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        try await sessions[0].join()
        try await sessions[1].join()
        await sessions[1].end()
        #expect(sessions[1].state == .invalidated(reason: .endedByParticipant))
        try await waitFor(sessions[0], .invalidated(reason: .endedByParticipant))
        try await waitFor(sessions[2], .invalidated(reason: .endedByParticipant))
        _ = clients
    }

    @Test func initiatorLeavingEndsAnEndsWhenInitiatorLeavesActivity() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2],
                                                            activity: Sketch(canvas: "owned", policy: .endsWhenInitiatorLeaves))
        for session in sessions { try await session.join() }
        await sessions[0].leave()
        try await waitFor(sessions[1], .invalidated(reason: .initiatorLeft))
        try await waitFor(sessions[2], .invalidated(reason: .initiatorLeft))
        _ = clients
    }

    @Test func automaticActivityOutlivesItsInitiator() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        for session in sessions { try await session.join() }
        await sessions[0].leave()
        try await withTimeout(10) {
            for await participants in sessions[1].activeParticipantsUpdates() where participants.count == 2 { return }
        }
        #expect(sessions[1].state == .joined)
        _ = clients
    }

    @Test func removedMemberIsDroppedAtOnce() async throws {
        let (conversation, clients, sessions) = try await startSession(server, users: [0, 1, 2])
        let messenger = GroupSessionMessenger(session: sessions[2])
        for session in sessions { try await session.join() }
        try await server.removeMember(2, from: conversation, by: 0)
        try await waitFor(sessions[2], .invalidated(reason: .conversationEnded))
        try await withTimeout(10) {
            for await participants in sessions[0].activeParticipantsUpdates() where participants.count == 2 { return }
        }
        #expect(!sessions[0].activeParticipants.contains(sessions[2].localParticipant!))
        await #expect(throws: TandemError.self) { try await messenger.send(Ping(sender: 2, number: 0)) }
        // A fresh client of the removed user hears of no session there, and cannot start one.
        let fresh = server.container(2).groupActivities
        try await fresh.setActiveConversation(conversation)
        let state = try await GroupStateObserver(fresh).eligibility()
        #expect(state.reason == .notAMember)
        _ = clients
    }

    @Test func lostConnectionInvalidatesWithError() async throws {
        let own = try SessionServer(users: 2)
        let (_, clients, sessions) = try await startSession(own, users: [0, 1])
        for session in sessions { try await session.join() }
        own.kill()
        try await waitFor(sessions[0], .invalidated(reason: .error))
        try await waitFor(sessions[1], .invalidated(reason: .error))
        _ = clients
    }

    @Test func changingTheActivityUpdatesItForEveryone() async throws {
        let (_, clients, sessions) = try await startSession(server, users: [0, 1])
        for session in sessions { try await session.join() }
        let updates = sessions[1].activityUpdates()
        try await sessions[0].setActivity(Sketch(canvas: "B"))
        let changed = try await withTimeout(10) {
            for await activity in updates where activity.canvas == "B" { return activity }
            throw TestFailure("no activity update")
        }
        #expect(changed == Sketch(canvas: "B"))
        #expect(try sessions[1].activity() == Sketch(canvas: "B"))
        _ = clients
    }

    @Test func activatingAgainUpdatesTheSameSession() async throws {
        let (conversation, clients, sessions) = try await startSession(server, users: [0, 1])
        try await sessions[1].join()
        let updates = sessions[1].activityUpdates()
        try await clients[0].groupActivities.activate(Sketch(canvas: "again"), in: conversation)
        _ = try await withTimeout(10) {
            for await activity in updates where activity.canvas == "again" { return activity }
            throw TestFailure("no activity update")
        }
        #expect(sessions[1].state == .joined)
    }

    struct Poster: GroupActivity {
        static let activityIdentifier = "com.example.poster"
        var image: Data
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "Poster", type: .watchTogether, previewImage: image) }
    }

    @Test func previewImageTravelsAsAnAsset() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let clients = [server.container(0), server.container(1)]
        try await clients[0].groupActivities.setActiveConversation(conversation)
        let image = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        #expect(try await Poster(image: image).activate(on: clients[0].groupActivities))
        let received = try await session(Poster.self, in: conversation, on: clients[1].groupActivities)
        #expect(received.metadata.title == "Poster" && received.metadata.type == .watchTogether)
        #expect(try await received.previewImage() == image)
        // Too large a preview is refused before anything starts.
        let huge = Poster(image: Data(count: (1 << 20) + 1))
        await #expect { try await huge.activate(on: clients[0].groupActivities) } throws: { ($0 as? TandemError)?.code == .limitExceeded }
    }

    struct Quiz: GroupActivity {
        static let activityIdentifier = "com.example.quiz"
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "Quiz", type: .playTogether) }
    }

    @Test func anotherActivityReplacesTheSessionOnlyWhenConfirmed() async throws {
        let (conversation, clients, sessions) = try await startSession(server, users: [0, 1])
        try await sessions[1].join()
        let activities = clients[0].groupActivities
        await #expect { try await Quiz().activate(on: activities) } throws: { ($0 as? TandemError)?.code == .activityConflict }
        #expect(sessions[1].state == .joined)
        #expect(try await Quiz().activate(on: activities, replacingExisting: true))
        try await waitFor(sessions[1], .invalidated(reason: .endedByParticipant))
        let quiz = try await session(Quiz.self, in: conversation, on: clients[1].groupActivities)
        #expect(quiz.state == .waiting)
    }

    struct Marked: GroupActivity {
        static let activityIdentifier = "com.x.<b>x</b>"
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "Marked") }
    }

    /// The default identifier of a generic type, `TandemTests.GroupSessionStateTests.Boxed<Swift.Int>`.
    struct Boxed<Value: Codable & Sendable>: GroupActivity {
        var value: Value
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "Boxed") }
    }

    /// C66: the SDK refuses an identifier the server would refuse, with the server's wording.
    @Test func anIdentifierThatIsNotAReverseDNSNameIsRefusedBeforeSending() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let activities = server.container(0).groupActivities
        try await activities.setActiveConversation(conversation)
        let refused: @Sendable (any Error, String) -> Bool = { error, identifier in
            guard let error = error as? TandemError else { return false }
            return error.code == .invalidArguments && error.message.contains("'\(identifier)'")
                && error.message.contains("letters, digits, '.', '-' and '_'")
        }
        await #expect { try await Marked().activate(on: activities) } throws: { refused($0, Marked.activityIdentifier) }
        await #expect { try await Boxed(value: 1).activate(on: activities) } throws: { refused($0, Boxed<Int>.activityIdentifier) }
        #expect(Boxed<Int>.activityIdentifier.contains("<"))
        #expect(try await Sketch(canvas: "fine").activate(on: activities))
    }

    @Test(arguments: [
        ("no declaration", GroupStateObserver.Reason.noActiveConversation),
        ("not a member", GroupStateObserver.Reason.notAMember),
    ])
    func eligibilityNamesWhyNot(_ entry: (String, GroupStateObserver.Reason)) async throws {
        let conversation = try await server.conversation(0, with: [1])
        let client = server.container(entry.1 == .notAMember ? 3 : 1).groupActivities
        if entry.1 == .notAMember { try await client.setActiveConversation(conversation) }
        let state = try await GroupStateObserver(client).eligibility(in: conversation)
        #expect(state == GroupStateObserver.Eligibility(isEligible: false, reason: entry.1, conversationID: conversation))
        #expect(await Sketch(canvas: "x").prepareForActivation(on: client) == .activationDisabled)
        await #expect { try await client.activate(Sketch(canvas: "x"), in: conversation) } throws: {
            ($0 as? TandemError)?.code == .permissionFailure
        }
    }

    @Test func declaringTheConversationMakesAMemberEligible() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let client = server.container(1).groupActivities
        try await client.setActiveConversation(conversation)
        #expect(try await GroupStateObserver(client).eligibility().isEligible)
        #expect(await Sketch(canvas: "x").prepareForActivation(on: client) == .activationPreferred)
        try await client.clearActiveConversation(conversation)
        #expect(try await GroupStateObserver(client).eligibility(in: conversation).reason == .noActiveConversation)
    }

    @Test func sharingControllerStagesTheActivityWithChosenPeople() async throws {
        let clients = [server.container(2), server.container(3)]
        let controller = GroupActivitySharingController(Sketch(canvas: "staged"), client: clients[0].groupActivities)
        #expect(try await controller.share(with: []) == .cancelled)
        guard case .success(let conversation) = try await controller.share(with: [server.recordNames[3]]) else {
            throw TestFailure("not shared")
        }
        let staged = try await session(Sketch.self, in: conversation, on: clients[1].groupActivities)
        #expect(try staged.activity() == Sketch(canvas: "staged"))
        try await staged.join()
        #expect(try await GroupStateObserver(clients[0].groupActivities).eligibility().isEligible)
        // Sharing again with the same person picks the same conversation.
        #expect(try await controller.share(with: [server.recordNames[3]]) == .success(conversationID: conversation))
    }
}
