import TandemCore
import TandemStore

/// Keeps a Tandem share's collaboration highlight fresh: when a save changes the share's
/// `cloudkit.title` or `cloudkit.type`, the stored collaboration (what highlights and notices
/// read, W4) takes the new values in the save's own transaction, every member of a conversation
/// that shared the URL gets a fresh highlight list, and a new title posts a `persistence`
/// notice with trigger `renamed` (SharedWithYou `SWHighlightPersistenceEvent.renamed`), actor
/// the saver (decisions R4).
enum ShareMetadataRefresh {
    /// One share whose title or type a save changed.
    struct Change {
        var share: StoredShare
        var title: String?
        var type: String?
        var renamed: Bool

        /// Nil when neither `cloudkit.title` nor `cloudkit.type` differs between the two versions.
        init?(share: StoredShare, before: Record, after: Record) {
            func text(_ record: Record, _ key: String) -> String? {
                if case .string(let value)? = record.fields[key] { return value }
                return nil
            }
            let title = text(after, "cloudkit.title"), type = text(after, "cloudkit.type")
            renamed = title != text(before, "cloudkit.title")
            guard renamed || type != text(before, "cloudkit.type") else { return nil }
            self.share = share
            self.title = title
            self.type = type
        }
    }

    static func apply(_ tx: any StoreWriting, _ changes: [Change], actor: String, container: String, environment: Environment,
                      at now: Int64) throws -> ConversationHub.Effects {
        var effects = ConversationHub.Effects(container: container, environment: environment)
        for change in changes {
            let id = Collaborations.identifier(shortGUID: change.share.shortGUID)
            guard try tx.collaboration(id: id, container: container, environment: environment) != nil else { continue }
            try tx.setCollaborationMetadata(id: id, container: container, environment: environment, title: change.title,
                                            contentType: change.type ?? Collaborations.shareContentType)
            guard let collaboration = try tx.collaboration(id: id, container: container, environment: environment) else { continue }
            let conversations = try NoticeService.conversations(tx, sharing: collaboration)
            for conversation in conversations { effects.highlightViewers.formUnion(conversation.members) }
            guard change.renamed, !conversations.isEmpty else { continue }
            _ = try NoticeService.append(tx, collaboration: collaboration, event: .persistence(3), actor: actor, subject: nil,
                                         conversations: conversations, at: now, effects: &effects)
        }
        return effects
    }
}
