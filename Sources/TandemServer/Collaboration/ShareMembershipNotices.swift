import TandemCore
import TandemStore

/// Membership notices a Tandem share posts by itself: when people are added to or removed from
/// a share whose URL was sent in conversations, an `addedCollaborator` / `removedCollaborator`
/// notice goes to those conversations with the actor, in the share change's own transaction.
enum ShareMembershipNotices {
    /// One person added to or removed from a share.
    struct Change {
        var share: StoredShare
        var user: String
        var added: Bool
    }

    static func post(_ tx: any StoreWriting, _ changes: [Change], actor: String, container: String, environment: Environment,
                     at now: Int64) throws -> ConversationHub.Effects {
        var effects = ConversationHub.Effects(container: container, environment: environment)
        for change in changes {
            guard let collaboration = try tx.collaboration(id: Collaborations.identifier(shortGUID: change.share.shortGUID), container: container, environment: environment) else { continue }
            let conversations = try NoticeService.conversations(tx, sharing: collaboration)
            guard !conversations.isEmpty else { continue }
            _ = try NoticeService.append(tx, collaboration: collaboration, event: .membership(change.added ? 1 : 2), actor: actor,
                                         subject: nil, conversations: conversations, at: now, effects: &effects)
        }
        return effects
    }
}
