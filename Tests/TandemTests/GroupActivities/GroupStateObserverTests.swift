import Foundation
import Synchronization
import Tandem
import TandemTestSupport
import Testing

/// `GroupStateObserver.eligibilityUpdates` follows what the server pushes (issue 23 item 5;
/// decisions R23–R24): a conversation declared active on another device of the user, and a
/// membership change, reach the sequence without anyone asking.
@Suite struct GroupStateObserverTests {
    let server = SessionServer.shared

    /// Collects a sequence's values as they arrive.
    final class Values: Sendable {
        final class Box: Sendable {
            let seen = Mutex<[GroupStateObserver.Eligibility]>([])
        }
        let box = Box()
        let task: Task<Void, Never>

        init(_ updates: AsyncStream<GroupStateObserver.Eligibility>) {
            let box = self.box
            task = Task { for await value in updates { box.seen.withLock { $0.append(value) } } }
        }

        deinit { task.cancel() }

        var all: [GroupStateObserver.Eligibility] { box.seen.withLock { $0 } }

        /// Waits (at most 15 s) until the latest value satisfies `condition`.
        func wait(for what: String, _ condition: (GroupStateObserver.Eligibility) -> Bool) async throws {
            let deadline = Date().addingTimeInterval(15)
            while !(all.last.map(condition) ?? false) {
                guard Date() < deadline else { throw TestFailure("no \(what) in \(all)") }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
        }
    }

    @Test func eligibilityChangesOnTheServerReachTheSequence() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let phone = server.container(0), laptop = server.container(0)
        let values = Values(GroupStateObserver(phone.groupActivities).eligibilityUpdates(in: conversation))
        try await values.wait(for: "first answer") { $0.reason == .noActiveConversation }
        // The laptop declares the conversation active: the phone's button enables itself.
        try await laptop.groupActivities.setActiveConversation(conversation)
        try await values.wait(for: "eligible") { $0.isEligible }
        // Bob removes Ada from the group: not a member any more.
        try await server.removeMember(0, from: conversation, by: 1)
        try await values.wait(for: "notAMember") { $0.reason == .notAMember }
        #expect(values.all.map(\.reason) == [.noActiveConversation, nil, .notAMember], "each change once, in order")
        #expect(values.all.allSatisfy { $0.conversationID == conversation })
    }

    @Test func withdrawingTheDeclarationOrClosingTheDeviceDisablesIt() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let phone = server.container(0), laptop = server.container(0)
        try await laptop.groupActivities.setActiveConversation(conversation)
        let values = Values(GroupStateObserver(phone.groupActivities).eligibilityUpdates(in: conversation))
        try await values.wait(for: "eligible") { $0.isEligible }
        try await laptop.groupActivities.clearActiveConversation(conversation)
        try await values.wait(for: "ineligible") { !$0.isEligible }
        #expect(values.all.map(\.isEligible) == [true, false])
    }
}

