import TandemCore
import TandemStore

/// Who may see a collaboration's presence (decisions R28): for a Tandem share, the share's
/// owner and accepted participants; for an app's own collaboration, its owner and the members
/// of every conversation of its container that shared its URL (the people its notices reach,
/// `NoticeService`).
enum CollaborationAudience {
    /// The user record names of the audience, or nil when the collaboration does not exist in
    /// this container environment.
    static func people(_ reader: any StoreReading, collaboration id: String, container: String,
                       environment: Environment) throws -> Set<String>? {
        guard let collaboration = try reader.collaboration(id: id, container: container, environment: environment),
              collaboration.container == container, collaboration.environment == environment else { return nil }
        var people: Set<String> = [collaboration.owner]
        // A share's URL opens nothing by itself (anyone may paste it into a conversation of
        // their own), so a share's audience is its people only, never a conversation's.
        guard let guid = collaboration.shareGUID else {
            for conversation in try NoticeService.conversations(reader, sharing: collaboration) { people.formUnion(conversation.members) }
            return people
        }
        if let share = try reader.share(shortGUID: guid, container: container, environment: environment) {
            people.insert(share.owner)
            for participant in try reader.participants(share: share) where participant.status == .accepted {
                if let name = participant.userRecordName { people.insert(name) }
            }
        }
        return people
    }
}
