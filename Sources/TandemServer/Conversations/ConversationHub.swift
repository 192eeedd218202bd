import Dispatch
import Foundation
import Synchronization
import TandemCore
import TandemStore

/// After-commit fan-out for Shared with You: conversation events and notices to members'
/// stream WebSockets, membership changes to observers, and fresh highlight snapshots to
/// subscribed clients, on every node: effects go through the bus (decisions N1), and each
/// node's hub applies what it hears. One serial queue keeps the order the hooks ran in (commit
/// order for writes that touched the same conversation or share: decisions P3; per publishing
/// node across nodes: N5) and keeps the writer free (RULES: publish after commit, never block).
final class ConversationHub: Sendable {
    /// What one committed write changed.
    struct Effects: Sendable {
        var container: String
        var environment: Environment
        /// Envelopes (`{"type": …}`) and the users who receive them.
        var envelopes: [(envelope: JSONValue, recipients: Set<String>)] = []
        var membership: [MembershipChange] = []
        /// Users whose highlight lists may have changed.
        var highlightViewers: Set<String> = []
        /// The share participants changed (membership sync applying a prompt, or a share save).
        var isEmpty: Bool { envelopes.isEmpty && membership.isEmpty && highlightViewers.isEmpty }

        /// These effects followed by `other`'s (same container and environment).
        func merged(with other: Effects) -> Effects {
            var merged = self
            merged.envelopes += other.envelopes
            merged.membership += other.membership
            merged.highlightViewers.formUnion(other.highlightViewers)
            return merged
        }
    }

    private let queue = DispatchQueue(label: "tandem-conversation-hub")
    /// Per viewer, bumped at commit whenever something their highlight lists read changed
    /// (cached lists compare it).
    private let generations = Locked<[String: UInt64]>([:])
    /// Bumped for everyone (a change whose viewers are not known).
    private let globalGeneration = Locked<UInt64>(0)
    private let observers = Locked<[@Sendable (MembershipChange) -> Void]>([])
    /// In a class, not as a closure in the `Mutex`: each `withLock { $0 }` of a closure kept
    /// directly would wrap it in more reabstraction thunks, slower at every call (N51).
    private let refresher = Locked<Refresher?>(nil)

    private final class Refresher: Sendable {
        let refresh: @Sendable (_ viewers: Set<String>, _ container: String, _ environment: Environment) -> Void
        init(_ refresh: @escaping @Sendable (Set<String>, String, Environment) -> Void) { self.refresh = refresh }
    }
    let streams: StreamRegistry
    private let bus: EventBus

    init(streams: StreamRegistry, bus: EventBus) {
        self.streams = streams
        self.bus = bus
        bus.subscribe { [weak self] delivery in
            switch delivery {
            case .event(let event):
                if case .conversation(let effects) = event.body { self?.apply(effects) }
            case .missed:
                // Highlight lists cached from before may miss a change: every cached list is read again.
                self?.globalGeneration.withLock { $0 += 1 }
            }
        }
    }

    func addMembershipObserver(_ observer: @escaping @Sendable (MembershipChange) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Set once at start: recomputes and pushes highlight snapshots for these viewers.
    func setHighlightRefresher(_ refresh: @escaping @Sendable (_ viewers: Set<String>, _ container: String, _ environment: Environment) -> Void) {
        refresher.withLock { $0 = Refresher(refresh) }
    }

    /// Publishes committed effects on the bus; cheap, callable from the store's after-commit hook.
    func publish(_ effects: Effects) {
        guard !effects.isEmpty else { return }
        bus.publish(.conversation(effects))
    }

    /// Effects heard on the bus (this node's at once, in the after-commit hook): highlight
    /// generations are bumped now, the rest is queued.
    private func apply(_ effects: Effects) {
        if !effects.highlightViewers.isEmpty {
            generations.withLock { all in
                if all.count > 100_000 { all.removeAll(); globalGeneration.withLock { $0 += 1 } }
                for viewer in effects.highlightViewers { all[viewer, default: 0] += 1 }
            }
        }
        queue.async { [self] in
            for (envelope, recipients) in effects.envelopes {
                streams.send(JSONWriter.string(envelope), to: recipients, container: effects.container, environment: effects.environment.rawValue)
            }
            let observers = observers.withLock { $0 }
            for change in effects.membership {
                for observer in observers { observer(change) }
            }
            if !effects.highlightViewers.isEmpty, let refresher = refresher.withLock({ $0 }) {
                refresher.refresh(effects.highlightViewers, effects.container, effects.environment)
            }
        }
    }

    /// The viewer's highlight generation: equal values mean nothing the list reads changed
    /// through this process (app and association-file changes are not counted: see W10).
    func generation(of viewer: String) -> UInt64 {
        let own = generations.withLock { $0[viewer] ?? 0 }
        return own &+ (globalGeneration.withLock { $0 } << 32)
    }

    /// Runs `work` on the hub's queue (after everything published before it).
    func enqueue(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}
