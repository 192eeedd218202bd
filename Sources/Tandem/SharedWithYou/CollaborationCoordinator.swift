import Foundation
internal import TandemCore

/// Custom collaboration for one container (SharedWithYou `SWCollaborationCoordinator`): runs
/// the start and participants-update actions through the app's handler when content is sent
/// to a conversation, and when the owner answers a membership prompt.
///
/// ```swift
/// let coordinator = CollaborationCoordinator(container: container)
/// coordinator.actionHandler = myHandler          // register early
/// try await coordinator.send(metadata, in: chat.id)
/// ```
///
/// Sending (spec §1.7 steps 1–4): start action → identities of the other members issued by the
/// server (`Container.identities(for:inCollaboration:)`, D24) → participants-update action →
/// identities confirmed (`updateParticipants`) → the message with the link. A failed or
/// timed-out action cancels the message (`TandemError.operationCancelled`).
public final class CollaborationCoordinator: Sendable {
    /// Seconds an action may take before it fails.
    public static let actionTimeout: Double = 30

    public let container: Container
    private let handler = WeakHandler()

    public init(container: Container) { self.container = container }

    /// Held weakly, as Apple's coordinator does.
    public var actionHandler: (any CollaborationActionHandler)? {
        get { handler.value }
        set { handler.value = newValue }
    }

    /// Starts a collaboration for `metadata` and sends its link to `conversation` with `text`.
    /// Returns the message sent.
    /// - Throws: `.operationCancelled` when there is no handler or an action fails or times out
    ///   (nothing is sent); the server's errors otherwise.
    @discardableResult
    public func send(_ metadata: CollaborationMetadata, text: String = "", in conversation: String) async throws(TandemError) -> ConversationEvent {
        guard let handlerNow = handler.value else { throw TandemError(.operationCancelled, "no action handler: the message was not sent") }
        var metadata = metadata
        if metadata.userSelectedShareOptions == nil { metadata.userSelectedShareOptions = metadata.defaultShareOptions }
        let start = StartCollaborationAction(metadata: metadata)
        handlerNow.collaborationCoordinator(self, handle: start)
        guard case .fulfilled(let url?, let identifier?) = await start.result(timeout: Self.actionTimeout) else {
            throw TandemError(.operationCancelled, "the start action failed: the message was not sent")
        }
        metadata.collaborationIdentifier = identifier
        let me = try await container.userRecordID().recordName
        let members = try await container.conversations.conversation(conversation).members.filter { $0 != me }
        let issued = try await container.identities(for: members, inCollaboration: identifier)
        let added = members.compactMap { issued[$0] }
        try await runUpdate(metadata: metadata, added: added, removed: [])
        try await container.updateParticipants(ofCollaboration: identifier, added: added)
        var collaboration: JSONObject = ["collaborationIdentifier": .string(identifier), "url": .string(url.absoluteString),
                                         "contentType": .string(metadata.contentType)]
        if let title = metadata.title { collaboration["title"] = .string(title) }
        return try await container.conversations.send(["conversation": .string(conversation), "text": .string(text),
                                                       "collaboration": .object(collaboration)])
    }

    /// Answers a membership prompt as the collaboration owner. Accepting updates Tandem shares on
    /// the server and runs a participants-update action for each custom collaboration named
    /// (the person's identity added, or the one issued to them removed), confirming it with the
    /// server once the app fulfils it. Returns the prompt as it is now.
    /// - Throws: `.operationCancelled` when an action fails (the shares were already updated;
    ///   the custom collaborations not yet handled are left as they were).
    @discardableResult
    public func respond(to prompt: MembershipPrompt, accept: Bool) async throws(TandemError) -> MembershipPrompt {
        let json = try await container.transport.json(container.transport.tandemURL("collaborations/prompts/respond"),
                                                      body: ["promptID": .string(prompt.id), "accept": .bool(accept)])
        for update in json["participantsUpdates"]?.arrayValue ?? [] {
            guard let identifier = update["collaborationIdentifier"]?.stringValue, let person = update["person"]?.stringValue else { continue }
            let metadata = CollaborationMetadata(collaborationIdentifier: identifier)
            if update["change"] == "add" {
                guard let identity = try await container.identities(for: [person], inCollaboration: identifier)[person] else { continue }
                try await runUpdate(metadata: metadata, added: [identity], removed: [])
                try await container.updateParticipants(ofCollaboration: identifier, added: [identity])
            } else if let hash = update["rootHash"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) {
                let identity = Person.Identity(rootHash: hash)
                try await runUpdate(metadata: metadata, added: [], removed: [identity])
                try await container.updateParticipants(ofCollaboration: identifier, added: [], removed: [identity])
            }
        }
        return MembershipPrompt(json: json["prompt"] ?? .null)
    }

    private func runUpdate(metadata: CollaborationMetadata, added: [Person.Identity], removed: [Person.Identity]) async throws(TandemError) {
        guard let handlerNow = handler.value else { throw TandemError(.operationCancelled, "no action handler") }
        let action = UpdateCollaborationParticipantsAction(metadata: metadata, added: added, removed: removed)
        handlerNow.collaborationCoordinator(self, handle: action)
        guard case .fulfilled = await action.result(timeout: Self.actionTimeout) else {
            throw TandemError(.operationCancelled, "the participants-update action failed: nothing was sent")
        }
    }
}

/// A weak reference behind a lock.
private final class WeakHandler: @unchecked Sendable {
    private let lock = NSLock()
    private weak var stored: (any CollaborationActionHandler)?

    var value: (any CollaborationActionHandler)? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
