import Foundation
public import TandemCore

/// A highlight event posted for a collaboration (SharedWithYou `SWHighlightEvent` and its four
/// classes), as `highlights/notices/post` reads it.
public struct NoticeRequest: Sendable, Hashable {
    /// The event class and its trigger, with the header's raw values.
    public enum Event: Sendable, Hashable {
        /// `SWHighlightChangeEvent`: `edit` = 1, `comment` = 2.
        case change(Int)
        /// `SWHighlightMentionEvent`: seen only by the mentioned person.
        case mention
        /// `SWHighlightPersistenceEvent`: `created` = 1, `deleted` = 2, `renamed` = 3, `moved` = 4.
        case persistence(Int)
        /// `SWHighlightMembershipEvent`: `addedCollaborator` = 1, `removedCollaborator` = 2.
        case membership(Int)

        static let triggers: [String: [String]] = [
            "change": ["edit", "comment"],
            "persistence": ["created", "deleted", "renamed", "moved"],
            "membership": ["addedCollaborator", "removedCollaborator"],
        ]

        var name: String {
            switch self {
            case .change: "change"
            case .mention: "mention"
            case .persistence: "persistence"
            case .membership: "membership"
            }
        }

        var trigger: Int? {
            switch self {
            case .change(let value), .persistence(let value), .membership(let value): value
            case .mention: nil
            }
        }

        var triggerName: String? { trigger.flatMap { Self.triggers[name]?[$0 - 1] } }
    }

    public var collaborationIdentifier: String?
    public var url: String?
    public var event: Event
    /// `SWPerson.Identity.rootHash` of the mentioned person (custom infrastructure).
    public var mentionedIdentity: [UInt8]?
    /// A share participant handle (email or phone) or user record name of the mentioned person.
    public var mentionedHandle: String?

    public init(collaborationIdentifier: String?, url: String?, event: Event, mentionedIdentity: [UInt8]? = nil, mentionedHandle: String? = nil) {
        self.collaborationIdentifier = collaborationIdentifier
        self.url = url
        self.event = event
        self.mentionedIdentity = mentionedIdentity
        self.mentionedHandle = mentionedHandle
    }

    /// Reads `{collaborationIdentifier | url, event, trigger (raw value or name), mentionedIdentity (base64), mentionedHandle}`.
    /// - Throws: `BAD_REQUEST` naming the first thing wrong.
    init(_ body: JSONObject) throws {
        typealias R = ConversationRoutes
        collaborationIdentifier = try R.optionalString(body, "collaborationIdentifier")
        url = try R.optionalString(body, "url")
        guard collaborationIdentifier != nil || url != nil else { throw CloudKitError.badRequest("send collaborationIdentifier or url") }
        let name = try R.string(body, "event")
        var trigger: Int?
        switch body["trigger"] {
        case .int(let value)?: trigger = Int(value)
        case .string(let text)?: trigger = Event.triggers[name]?.firstIndex(of: text).map { $0 + 1 }
            if trigger == nil { throw CloudKitError.badRequest("'\(text)' is not a \(name) trigger (\(Event.triggers[name]?.joined(separator: ", ") ?? "none"))") }
        case nil, .null?: trigger = nil
        default: throw CloudKitError.badRequest("trigger must be a raw value or a name")
        }
        func checked(_ constructor: (Int) -> Event) throws -> Event {
            guard let trigger, trigger >= 1, trigger <= (Event.triggers[name]?.count ?? 0) else {
                throw CloudKitError.badRequest("a \(name) event needs a trigger: \(Event.triggers[name]!.enumerated().map { "\($0.element) = \($0.offset + 1)" }.joined(separator: ", "))")
            }
            return constructor(trigger)
        }
        switch name {
        case "change": event = try checked(Event.change)
        case "persistence": event = try checked(Event.persistence)
        case "membership": event = try checked(Event.membership)
        case "mention": event = .mention
        default: throw CloudKitError.badRequest("event must be change, mention, persistence or membership")
        }
        mentionedHandle = try R.optionalString(body, "mentionedHandle")
        if let encoded = try R.optionalString(body, "mentionedIdentity") {
            guard let data = Data(base64Encoded: encoded), !data.isEmpty else { throw CloudKitError.badRequest("mentionedIdentity must be base64") }
            mentionedIdentity = [UInt8](data)
        }
        if case .mention = event, mentionedHandle == nil, mentionedIdentity == nil {
            throw CloudKitError.badRequest("a mention needs mentionedIdentity or mentionedHandle")
        }
    }
}
