import Foundation
import TandemCore
import TandemStore

/// Membership sync (spec §1.7 step 7): when a conversation gains or loses a member, the owner
/// of each collaboration shared there gets ONE prompt naming all of them ("Add Lauren to your
/// 3 shared documents"). Written in the membership change's transaction. A Tandem share counts
/// only where one of its people sent its URL (`SharePeople`, W15): a stranger who pasted it, or
/// who made a conversation with one of its people in it, cannot drive its owner's prompts.
enum MembershipSync {
    static func prompt(_ tx: any StoreWriting, conversation: StoredConversation, person: String, change: StoredMembershipPrompt.Change,
                       at now: Int64, effects: inout ConversationHub.Effects) throws {
        let shared = try tx.collaborationsShared(conversation: conversation.id).filter { collaboration in
            guard let people = try SharePeople.of(tx, collaboration) else { return true }
            return try SharePeople.sent(tx, url: collaboration.url, in: conversation.id, byOneOf: people)
        }
        let byOwner = Dictionary(grouping: shared.filter { $0.owner != person }, by: \.owner)
        for (owner, collaborations) in byOwner.sorted(by: { $0.key < $1.key }) {
            let prompt = StoredMembershipPrompt(id: UUID().uuidString.lowercased(), container: conversation.container,
                                                environment: conversation.environment, owner: owner, conversationID: conversation.id,
                                                person: person, change: change, collaborations: collaborations.map(\.id),
                                                state: .pending, createdAt: now)
            try tx.putPrompt(prompt)
            effects.envelopes.append((["type": "collaboration.prompt", "prompt": try CollaborationCodec.prompt(prompt, tx)], [owner]))
        }
    }
}
