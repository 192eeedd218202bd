import TandemCore
import TandemStore

/// Conversation effects as the bus carries them (decisions N2): envelopes as
/// `{"envelope": <JSON text>, "recipients": [...]}` entries.
extension ConversationHub.Effects: Codable {
    private enum CodingKeys: String, CodingKey {
        case container, environment, envelopes, membership, highlightViewers
    }

    private struct Entry: Codable {
        var envelope: JSONValue
        var recipients: Set<String>
    }

    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        container = try values.decode(String.self, forKey: .container)
        environment = try values.decode(Environment.self, forKey: .environment)
        envelopes = try values.decode([Entry].self, forKey: .envelopes).map { ($0.envelope, $0.recipients) }
        membership = try values.decode([MembershipChange].self, forKey: .membership)
        highlightViewers = try values.decode(Set<String>.self, forKey: .highlightViewers)
    }

    func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(container, forKey: .container)
        try values.encode(environment, forKey: .environment)
        try values.encode(envelopes.map { Entry(envelope: $0.envelope, recipients: $0.recipients) }, forKey: .envelopes)
        try values.encode(membership, forKey: .membership)
        try values.encode(highlightViewers, forKey: .highlightViewers)
    }
}
