import Dispatch
import TandemCore
import TandemStore

/// Presence across nodes (issue 20; decisions N55–N56). Each node publishes, after every change,
/// the people who have a collaboration open through its own connections (`PresenceTraffic.room`),
/// and keeps what every other node published; a count is this node's people and the others',
/// filtered by the audience as before (R28). A node heard for the first time gets everything
/// this node has open (`all`) and is asked for its own, so a node that starts later, or comes
/// back, catches up both ways; so does every node after the bus may have lost messages. A node
/// not heard for `silence` milliseconds (it publishes the session heartbeat every second, N24)
/// is taken as gone: its people stop counting and this node's watchers hear the new count.
extension CollaborationPresence {
    /// What this node knows of the others, and what it told them.
    struct Cluster: Sendable {
        /// Per room, per other node: the people with it open there.
        var elsewhere: [Key: [String: Set<String>]] = [:]
        /// Per room: the people with it open here, as last published.
        var published: [Key: Set<String>] = [:]
        /// When each other node was last heard (milliseconds of `DispatchTime`).
        var lastHeard: [String: UInt64] = [:]
    }

    /// How long a node may stay silent before its people stop counting (milliseconds): the
    /// session heartbeat's rule (N24), so presence and sessions agree on who is gone.
    static let silence: UInt64 = 3_000

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// Hears the other nodes' presence and their heartbeats. Own events are skipped.
    func connect(to bus: EventBus) {
        bus.subscribe { [weak self] delivery in
            guard let self else { return }
            guard case .event(let event) = delivery else { return self.publishAll(askBack: true) }
            guard event.origin != bus.node else { return }
            switch event.body {
            case .presence(let traffic): self.heard(traffic, from: event.origin)
            case .session(let traffic):
                if case .heartbeat = traffic.kind { self.heard(event.origin) }
            default: return
            }
        }
    }

    /// Every second: forgets the nodes silent for longer than `silence`.
    func startSweep() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "tandem-presence-sweep"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in
            guard let self else { return timer.cancel() }
            self.forgetSilentNodes(olderThan: Self.now() &- Self.silence)
        }
        timer.resume()
    }

    /// The people with `key` open on other nodes.
    func elsewhere(_ key: Key) -> Set<String> {
        cluster.withLock { cluster in cluster.elsewhere[key]?.values.reduce(into: Set<String>()) { $0.formUnion($1) } ?? [] }
    }

    /// On the hub's queue, after `key` changed here: publishes who has it open here when that
    /// differs from what the other nodes were told.
    func tellOtherNodes(_ key: Key, _ people: Set<String>) {
        guard let bus else { return }
        let changed = cluster.withLock { cluster -> Bool in
            guard cluster.published[key, default: []] != people else { return false }
            cluster.published[key] = people.isEmpty ? nil : people
            return true
        }
        guard changed else { return }
        bus.publish(.presence(PresenceTraffic(kind: .room(PresenceTraffic.Occupancy(room: key, people: people.sorted())))))
    }

    /// A node was heard: the first time, it is told everything this node has open, and asked for its own.
    private func heard(_ node: String) {
        let isNew = cluster.withLock { $0.lastHeard.updateValue(Self.now(), forKey: node) == nil }
        if isNew { publishAll(askBack: true) }
    }

    /// Publishes everything this node has open (on the hub's queue, after what it published before).
    private func publishAll(askBack: Bool) {
        guard let bus else { return }
        hub.enqueue { [self] in
            let all = cluster.withLock { cluster in
                cluster.published.map { PresenceTraffic.Occupancy(room: $0.key, people: $0.value.sorted()) }
            }
            bus.publish(.presence(PresenceTraffic(kind: .all(all, askBack: askBack))))
        }
    }

    private func heard(_ traffic: PresenceTraffic, from node: String) {
        heard(node)
        hub.enqueue { [self] in
            let changed = cluster.withLock { cluster -> Set<Key> in
                switch traffic.kind {
                case .room(let occupancy):
                    Self.set(occupancy.room, Set(occupancy.people), for: node, in: &cluster)
                    return [occupancy.room]
                case .all(let occupancies, _):
                    var changed = Set(cluster.elsewhere.filter { $0.value[node] != nil }.keys)
                    for key in changed { Self.set(key, [], for: node, in: &cluster) }
                    for occupancy in occupancies {
                        Self.set(occupancy.room, Set(occupancy.people), for: node, in: &cluster)
                        changed.insert(occupancy.room)
                    }
                    return changed
                }
            }
            for key in changed where hasConnections(key) { broadcast(key) }
        }
        if case .all(_, askBack: true) = traffic.kind { publishAll(askBack: false) }
    }

    private static func set(_ key: Key, _ people: Set<String>, for node: String, in cluster: inout Cluster) {
        cluster.elsewhere[key, default: [:]][node] = people.isEmpty ? nil : people
        if cluster.elsewhere[key]?.isEmpty == true { cluster.elsewhere.removeValue(forKey: key) }
    }

    func forgetSilentNodes(olderThan cutoff: UInt64) {
        let changed = cluster.withLock { cluster -> Set<Key> in
            let gone = Set(cluster.lastHeard.filter { $0.value < cutoff }.keys)
            guard !gone.isEmpty else { return [] }
            for node in gone { cluster.lastHeard.removeValue(forKey: node) }
            var changed: Set<Key> = []
            for (key, nodes) in cluster.elsewhere where !gone.isDisjoint(with: nodes.keys) {
                for node in gone { Self.set(key, [], for: node, in: &cluster) }
                changed.insert(key)
            }
            return changed
        }
        guard !changed.isEmpty else { return }
        hub.enqueue { [self] in for key in changed where hasConnections(key) { broadcast(key) } }
    }
}
