import TandemCore
import TandemStore

/// Who may have a Tandem share's collaboration highlight in their lists: the members of every
/// conversation the share reaches (`NoticeService.conversations`, W15). A change of the
/// share's people changes which conversations it reaches (a removed participant's sends stop
/// counting), so whoever changes them reads this before and after, and refreshes them all
/// after commit (W19), as a stopped share does (W17).
enum ShareReach {
    /// The members of the conversations the share reaches now; none when it has no
    /// collaboration (its URL was never sent by one of its people).
    static func viewers(_ reader: any StoreReading, shortGUID: String, container: String, environment: Environment) throws -> Set<String> {
        guard let collaboration = try reader.collaboration(id: Collaborations.identifier(shortGUID: shortGUID), container: container,
                                                           environment: environment) else { return [] }
        return Set(try NoticeService.conversations(reader, sharing: collaboration).flatMap(\.members))
    }

    /// Effects refreshing `viewers`' highlight lists (stream snapshot and cached lists).
    static func effects(_ viewers: Set<String>, container: String, environment: Environment) -> ConversationHub.Effects {
        var effects = ConversationHub.Effects(container: container, environment: environment)
        effects.highlightViewers = viewers
        return effects
    }
}
