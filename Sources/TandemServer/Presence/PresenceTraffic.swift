import TandemStore

/// Collaboration presence between nodes (decisions N55–N56): each node tells the others which
/// people have a collaboration open through its own connections; watchers are never sent (each
/// node answers its own watchers). Every message replaces what receivers held of that node, so a
/// message heard twice or late changes nothing.
struct PresenceTraffic: Codable, Sendable {
    /// One collaboration of one container environment (`collaborationIdentifier`, R27).
    struct Room: Codable, Sendable, Hashable {
        var container: String
        var environment: Environment
        var collaboration: String
    }

    /// The distinct people (user record names, sorted) with `room` open on the sending node.
    struct Occupancy: Codable, Sendable {
        var room: Room
        var people: [String]
    }

    enum Kind: Codable, Sendable {
        /// A node → every other, after a change: who has this room open on it now (empty: nobody).
        /// On the container environment's subject (N3).
        case room(Occupancy)
        /// A node → every other: every room it has people in; receivers forget that node's other
        /// rooms. Sent when it hears a node for the first time and after the bus may have lost
        /// messages (N6), then with `askBack`: every receiver answers with its own `all` (without),
        /// so a node that was forgotten by one side only, or missed messages, catches up both
        /// ways. On `tandem.1.cluster`.
        case all([Occupancy], askBack: Bool)
    }

    var kind: Kind
}
