internal import Synchronization

/// Tells an app what happens to the shares it owns (the role of CloudKit's
/// `CKSystemSharingUIObserver`, which reports saves and stops made in the system sharing UI;
/// Tandem has no system UI, so it reports what the owner's change feed shows).
///
/// ```swift
/// let observer = ShareObserver(localStore: store)          // or ShareObserver(syncEngine: engine)
/// for await event in observer.events {
///     switch event {
///     case .saved(let share): print("shared:", share.url!)
///     case .accepted(_, let participant): print(participant.userIdentity.nameComponents as Any, "joined")
///     case .left(_, let participant): print(participant.userIdentity.userRecordID as Any, "left")
///     case .accessRequested(_, let requester): print(requester.userIdentity, "asks to join")
///     case .stopped(let shareID): print("sharing stopped:", shareID)
///     }
/// }
/// ```
///
/// It reads the sync engine's fetched and sent changes and makes no requests of its own (no
/// polling beyond the engine's push-driven fetches, decisions K12, R9). Only shares whose
/// `currentUserParticipant` is the owner count, so give it the private database's engine.
///
/// How events are told apart (decisions R8–R11): the observer remembers the last version of each
/// owned share it saw and compares the next one with it, using `lastModifiedUserRecordID` (the
/// server stamps accepts, leaves and requests with the person who made them, T11) to tell a
/// participant who left from one the owner removed. A share met for the first time since the
/// observer started (after a relaunch of an app without `LocalStore`) is judged by that stamp
/// alone. A listing of a zone from the start (its first fetch, an expired token) shows state,
/// not changes: a share in it that the observer has not seen is reported once as `saved`
/// (so a new device learns the user's shares), one it has seen is compared as usual. The change feed keeps each
/// record's latest version only (S1), so several changes between two fetches arrive as one
/// version: several acceptances are each reported, but a participant who left before the owner
/// saved again reads as removed by the owner (`saved`).
public final class ShareObserver: Sendable {
    /// Something that happened to a share the user owns.
    public enum Event: Sendable, Hashable {
        /// The owner (or an administrator) saved the share: created it, changed participants or
        /// permissions, or answered access requests (`systemSharingUIDidSaveShareBlock`).
        case saved(Share)
        /// A participant's acceptance status became `.accepted`.
        case accepted(Share, participant: Share.Participant)
        /// A participant removed themselves: left, or declined the invitation
        /// (`participant.acceptanceStatus` says which it was before: `.accepted` or `.pending`).
        case left(Share, participant: Share.Participant)
        /// Someone asked to join (decisions D7); answer with `Container.approveRequesters(_:of:permission:)`.
        case accessRequested(Share, requester: Share.AccessRequester)
        /// The share was deleted, with its zone or its root record: sharing stopped
        /// (`systemSharingUIDidStopSharingBlock`).
        case stopped(Record.ID)
    }

    /// The events, in the order the engine fetched or sent the changes. One sequence per
    /// observer, buffered until read; it ends when the observer is released.
    public let events: AsyncStream<Event>
    private let reader: ShareChangeReader
    private let continuation: AsyncStream<Event>.Continuation

    /// Observes the shares `syncEngine` fetches and sends (the private database's engine).
    public convenience init(syncEngine: SyncEngine) {
        self.init(syncEngine: syncEngine, known: [])
    }

    /// Observes a local store's private database. The shares the file already holds are the
    /// starting point, so changes fetched after a relaunch are compared with what was seen before.
    public convenience init(localStore: LocalStore) {
        self.init(syncEngine: localStore.privateEngine, known: [])
        reader.remember((try? localStore.fetchShares(in: .private)) ?? [])
    }

    init(syncEngine: SyncEngine, known: [Share]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        events = stream
        self.continuation = continuation
        let reader = ShareChangeReader()
        reader.remember(known)
        self.reader = reader
        syncEngine.addTap { [weak reader, weak syncEngine] event in
            guard let reader, let syncEngine else { return }
            for change in reader.read(event, hasFetched: syncEngine.hasFetched) { continuation.yield(change) }
        }
    }

    deinit { continuation.finish() }
}
