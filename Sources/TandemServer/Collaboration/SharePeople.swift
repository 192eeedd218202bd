import TandemCore
import TandemStore

/// Whom a Tandem share's URL speaks for (decisions W14, W15). A share's people are its owner
/// and its participants invited or accepted (not removed). Its URL opens nothing by itself, and
/// anyone may paste it anywhere or put anyone into a new conversation, so a conversation hears
/// of the share (its notices, its highlight's title and owner, membership prompts to its owner)
/// only where one of its people *sent* the URL; being a member there is not enough.
enum SharePeople {
    /// The share's people by user record name (none once the share is stopped); nil for an
    /// app's own collaboration, which keeps the conversations that shared its URL (W8).
    static func of(_ reader: any StoreReading, _ collaboration: StoredCollaboration) throws -> Set<String>? {
        guard let guid = collaboration.shareGUID else { return nil }
        // A stopped share has no people: its URL reaches no conversation any more (W17).
        guard let share = try reader.share(shortGUID: guid, container: collaboration.container, environment: collaboration.environment) else { return [] }
        return try of(reader, share: share).union([collaboration.owner])
    }

    /// The share's people by user record name: its owner and its participants invited or
    /// accepted (not removed).
    static func of(_ reader: any StoreReading, share: StoredShare) throws -> Set<String> {
        var people: Set<String> = [share.owner]
        for participant in try reader.participants(share: share) where participant.status == .accepted || participant.status == .pending {
            if let name = participant.userRecordName { people.insert(name) }
        }
        return people
    }

    /// True when one of `people` sent `url` into the conversation (at any time; the people are
    /// read now, so a participant removed since no longer counts).
    static func sent(_ reader: any StoreReading, url: String, in conversation: String, byOneOf people: Set<String>) throws -> Bool {
        try reader.linkSenders(conversation: conversation, url: url).contains(where: people.contains)
    }
}
