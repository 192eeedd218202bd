public import Foundation
internal import TandemCore
import Synchronization

/// The live handle on a shared activity (SharePlay: `GroupSession<ActivityType>`), delivered by
/// `Activity.sessions(on:)`; apps never create one.
///
/// ```swift
/// for await session in Drawing.sessions(on: container.groupActivities) {
///     let messenger = GroupSessionMessenger(session: session)
///     try await session.join()
///     for await participants in session.activeParticipantsUpdates() { print(participants.count) }
/// }
/// ```
///
/// `state` goes `.waiting` → `.joined` → `.invalidated(reason:)` (D: left, endedByParticipant,
/// conversationEnded, everyoneLeft, initiatorLeft, error). The `…Updates()` sequences play the
/// role of Apple's `$state`, `$activeParticipants` and `$activity` publishers: each starts with
/// the current value and ends when the session is invalidated.
public final class GroupSession<Activity: GroupActivity>: Sendable, Identifiable {
    public typealias State = GroupSessionState
    let core: SessionCore

    init(core: SessionCore) { self.core = core }

    /// The session's ID (the same on every participant's device).
    public var id: UUID { core.id }
    /// The conversation the session runs in.
    public var conversationID: String { core.conversationID }
    /// Whether this client's connection activated it (SharePlay: `isLocallyInitiated`).
    public var isLocallyInitiated: Bool { core.isLocallyInitiated }
    public var state: State { core.state.withLock { $0.status } }

    /// The current activity, decoded. Throws `incompatibleVersion` when it does not decode as `Activity`.
    public func activity() throws(TandemError) -> Activity {
        try ActivityWire.decode(core.state.withLock { $0.activity }, as: Activity.self)
    }

    /// The activity's metadata as the initiator described it.
    public var metadata: GroupActivityMetadata { ActivityWire.metadata(core.state.withLock { $0.activity }) }

    /// The activity's preview image (its metadata's `previewImage`), downloaded; nil when it has none.
    public func previewImage() async throws(TandemError) -> Data? {
        guard let checksum = core.state.withLock({ $0.activity })["metadata"]?["previewImage"]?["checksum"]?.stringValue else { return nil }
        return try await core.link.transport.send(core.link.transport.previewURL(checksum: checksum), method: "GET", body: nil,
                                                  contentType: "")
    }

    /// Replaces the activity for everyone (SharePlay: setting `activity`); same activity type only.
    /// - Throws: `invalidArguments` before `join()` or for another activity identifier.
    public func setActivity(_ activity: Activity) async throws(TandemError) {
        _ = try await core.link.request("session.setActivity", ["sessionID": .string(id.uuidString),
                                                                "activity": try await ActivityWire.prepare(activity, core.link)])
    }

    /// Joined participants, this one included (empty until joined).
    public var activeParticipants: Set<Participant> {
        core.state.withLock { state in state.status == .joined ? Set(state.participants.map(Participant.init(id:))) : [] }
    }

    /// This client's participant: nil until `join()` succeeds; a new ID for each join (D34).
    public var localParticipant: Participant? { core.state.withLock { $0.local.map(Participant.init(id:)) } }

    /// Joins: the answer carries the activity, participants, journal and state store (D36).
    /// - Throws: `permissionFailure` for a non-member, `tooManyParticipants` at the limit (D33),
    ///   `invalidArguments` for an invalidated session.
    public func join() async throws(TandemError) { try await core.join() }

    /// Leaves; the others continue. The session becomes `.invalidated(reason: .left)`.
    public func leave() async { await core.leave() }

    /// Ends the session for everyone (`.endedByParticipant`).
    public func end() async { await core.end() }

    public func stateUpdates() -> AsyncStream<State> { core.statuses.stream(initial: state) }

    public func activeParticipantsUpdates() -> AsyncStream<Set<Participant>> {
        core.participantChanges.stream(initial: state == .joined ? activeParticipants : nil)
    }

    /// Activity changes, decoded (values that do not decode are skipped).
    public func activityUpdates() -> AsyncStream<Activity> {
        let source = core.activities.stream(initial: nil)
        return AsyncStream { continuation in
            let task = Task {
                for await json in source { if let value = try? ActivityWire.decode(json, as: Activity.self) { continuation.yield(value) } }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The session's state store (D36).
    public var stateStore: GroupSessionStateStore { GroupSessionStateStore(core: core) }
}
