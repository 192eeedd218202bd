public import Foundation

/// The app's side of custom collaboration (SharedWithYou `SWCollaborationActionHandler`).
/// Handle each action quickly and call `fulfill` or `fail`: the coordinator waits
/// `CollaborationCoordinator.actionTimeout` seconds, then fails the action.
public protocol CollaborationActionHandler: AnyObject, Sendable {
    /// Create the collaboration on your server and `fulfill(using:collaborationIdentifier:)`;
    /// `fail()` cancels the message.
    func collaborationCoordinator(_ coordinator: CollaborationCoordinator, handle action: StartCollaborationAction)
    /// Store the added identities' root hashes against the collaboration (and drop the removed
    /// ones), then `fulfill()`; only then is the message sent. `fail()` cancels it.
    func collaborationCoordinator(_ coordinator: CollaborationCoordinator, handle action: UpdateCollaborationParticipantsAction)
}

/// An action the app completes once (SharedWithYou `SWAction`).
public class CollaborationAction: @unchecked Sendable {
    public let uuid = UUID()
    private let lock = NSLock()
    private var outcome: Outcome?
    private var waiter: CheckedContinuation<Outcome, Never>?

    enum Outcome: Sendable {
        case fulfilled(URL?, String?)
        case failed
    }

    /// Whether `fulfill` or `fail` was called (or the action timed out).
    public var isComplete: Bool { lock.withLock { outcome != nil } }

    /// Fails the action: the message is not sent.
    public func fail() { complete(.failed) }

    func complete(_ value: Outcome) {
        let waiting: CheckedContinuation<Outcome, Never>? = lock.withLock {
            guard outcome == nil else { return nil }
            outcome = value
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: value)
    }

    /// Waits for the app's answer, failing after `timeout` seconds.
    func result(timeout: Double) async -> Outcome {
        let timer = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
            self?.complete(.failed)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let ready: Outcome? = lock.withLock {
                if let outcome { return outcome }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// Start a collaboration for content about to be sent (SharedWithYou `SWStartCollaborationAction`).
public final class StartCollaborationAction: CollaborationAction, @unchecked Sendable {
    /// With `userSelectedShareOptions` filled in.
    public let collaborationMetadata: CollaborationMetadata

    init(metadata: CollaborationMetadata) { collaborationMetadata = metadata }

    /// The collaboration exists: its universal link and device-independent identifier.
    public func fulfill(using url: URL, collaborationIdentifier: String) { complete(.fulfilled(url, collaborationIdentifier)) }
}

/// People are added to or removed from a collaboration (SharedWithYou
/// `SWUpdateCollaborationParticipantsAction`).
public final class UpdateCollaborationParticipantsAction: CollaborationAction, @unchecked Sendable {
    /// Now carries `collaborationIdentifier`.
    public let collaborationMetadata: CollaborationMetadata
    public let addedIdentities: [Person.Identity]
    public let removedIdentities: [Person.Identity]

    init(metadata: CollaborationMetadata, added: [Person.Identity], removed: [Person.Identity]) {
        collaborationMetadata = metadata
        addedIdentities = added
        removedIdentities = removed
    }

    public func fulfill() { complete(.fulfilled(nil, nil)) }
}
