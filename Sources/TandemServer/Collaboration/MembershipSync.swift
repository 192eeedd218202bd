import Foundation
import TandemCore
import TandemStore

/// Membership sync (spec §1.7 step 7): when a conversation gains or loses a member, the owner
/// of each collaboration shared there gets ONE prompt naming all of them ("Add Lauren to your
/// 3 shared documents"). Written in the membership change's transaction.
///
/// Which collaborations count (decisions W15, W16): only an owner who is a member of the
/// conversation is asked (Messages shows the banner to the owner, in the group), so a prompt
/// never names a person the owner shares nothing with, and nobody can send an owner prompts from
/// a conversation the owner is not in. A Tandem share counts only where one of its people sent
/// its URL (`SharePeople`), and never when it is public: its people join by URL, so accepting
/// could do nothing (W9).
enum MembershipSync {
    static func prompt(_ tx: any StoreWriting, conversation: StoredConversation, person: String, change: StoredMembershipPrompt.Change,
                       at now: Int64, effects: inout ConversationHub.Effects) throws {
        let shared = try tx.collaborationsShared(conversation: conversation.id).filter { collaboration in
            guard collaboration.owner != person, conversation.members.contains(collaboration.owner) else { return false }
            // A Tandem share is named only where the prompt could change it: "remove" for one
            // of its people, "add" for someone not yet among them (an app's own: always).
            if let people = try SharePeople.of(tx, collaboration), people.contains(person) != (change == .remove) { return false }
            return try counts(tx, collaboration, in: conversation.id)
        }
        let byOwner = Dictionary(grouping: shared, by: \.owner)
        for (owner, collaborations) in byOwner.sorted(by: { $0.key < $1.key }) {
            let prompt = StoredMembershipPrompt(id: UUID.random().uuidString.lowercased(), container: conversation.container,
                                                environment: conversation.environment, owner: owner, conversationID: conversation.id,
                                                person: person, change: change, collaborations: collaborations.map(\.id),
                                                state: .pending, createdAt: now)
            try tx.putPrompt(prompt)
            effects.envelopes.append((["type": "collaboration.prompt", "prompt": try CollaborationCodec.prompt(prompt, tx)], [owner]))
        }
    }

    /// Whether `collaboration`, shared in the conversation, is one a prompt may name now: an
    /// app's own, or a Tandem share that is not public and whose URL one of its people sent
    /// there. Asked again when the owner answers, so a prompt made before a participant was
    /// removed (or the share made public) changes nothing (W16).
    static func counts(_ reader: any StoreReading, _ collaboration: StoredCollaboration, in conversation: String) throws -> Bool {
        guard let guid = collaboration.shareGUID else { return true }
        guard let share = try reader.share(shortGUID: guid, container: collaboration.container, environment: collaboration.environment),
              share.publicPermission == .none,
              let people = try SharePeople.of(reader, collaboration) else { return false }
        return try SharePeople.sent(reader, url: collaboration.url, in: conversation, byOneOf: people)
    }
}
