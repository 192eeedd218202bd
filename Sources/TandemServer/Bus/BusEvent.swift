import TandemCore
import TandemStore

/// One event the hubs fan out after a commit (DESIGN.md §5; decisions N2), as it travels
/// between nodes: JSON by `Codable` (`JSONEncoder`), on a subject per container environment
/// (N3).
struct BusEvent: Codable, Sendable {
    /// The node that published it (`EventBus.node`, random per process). A node skips its own
    /// events should the transport echo them, and does once-per-cluster work (webhooks) only for
    /// its own (N4).
    var origin: String
    var body: Body
    /// When its node published it: seconds since 1970 (wall clock). Receivers measure the bus's
    /// lag by it (`tandem_bus_lag_seconds`, N41); absent from events of nodes before it.
    var sentAt: Double? = nil

    enum Body: Codable, Sendable {
        /// A notification for one user's subscription, matched once, on the node that committed
        /// the change (`ChangeHub`; N4).
        case notification(PushNotification)
        /// Shared with You after a commit: envelopes to members' streams, membership changes,
        /// viewers whose highlight lists changed (`ConversationHub`).
        case conversation(ConversationHub.Effects)
        /// Sign-in grants were revoked: every node forgets the grants it cached (`Authenticator`).
        case grantsRevoked
        /// Group-session traffic between nodes: the session's owner and the nodes of its
        /// members (`SessionHub`; decisions N19–N22).
        case session(SessionTraffic)
        /// Who has a collaboration open through each node (`CollaborationPresence`; N55–N56).
        case presence(PresenceTraffic)
        /// Attempts counted by a brute-force limit on one node, which every node counts too
        /// (`SignInLimiter`, `TokenBuckets`; N64).
        case attempts(AttemptTraffic)
        /// The marker sent instead of an event of `bytes` bytes, over the bus's payload limit:
        /// receivers tell their subscribers they missed something (N30). Never delivered as an event.
        case tooLarge(bytes: Int)
    }

    /// The event as it is sent to other nodes: without what only the origin node uses (a
    /// notification's webhook URL and secret: webhooks are posted by the origin only, N4, N28).
    var forOtherNodes: BusEvent {
        guard case .notification(var notification) = body else { return self }
        notification.webhookURL = nil
        notification.webhookSecret = nil
        var copy = self
        copy.body = .notification(notification)
        return copy
    }

    /// Version 1 of the subjects; every node subscribes to `tandem.1.>`.
    static let prefix = "tandem.1."

    /// `tandem.1.<environment>.<container>` for an event of one container environment, the
    /// container encoded as one subject token (`subjectToken`); `tandem.1.cluster` for the rest.
    var subject: String {
        switch body {
        case .notification(let notification): Self.subject(container: notification.container, environment: notification.environment)
        case .conversation(let effects): Self.subject(container: effects.container, environment: effects.environment.rawValue)
        case .grantsRevoked, .tooLarge, .attempts: Self.prefix + "cluster"
        case .session(let traffic):
            switch traffic.kind {
            case .heartbeat, .declarationsWanted, .leaving: Self.prefix + "cluster"
            default:
                Self.subject(container: traffic.container, environment: traffic.environment)
            }
        case .presence(let traffic):
            switch traffic.kind {
            case .room(let occupancy): Self.subject(container: occupancy.room.container, environment: occupancy.room.environment.rawValue)
            case .all: Self.prefix + "cluster"
            }
        }
    }

    static func subject(container: String, environment: String) -> String {
        Self.prefix + subjectToken(environment) + "." + subjectToken(container)
    }

    /// `text` as one NATS subject token: ASCII letters, digits, `-` and `_` as they are, every
    /// other byte as `%XX` (a container identifier's dots would split it into tokens; `*`, `>`
    /// and spaces are not allowed in a subject).
    static func subjectToken(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out.isEmpty ? "%" : out
    }
}
