import Foundation
import Synchronization
import TandemCore
import TandemStore

/// The change hub (DESIGN.md §3): committed changes come in from the store's after-commit
/// hook, one zone's in its change-sequence order (decisions P3: nothing more is promised, and
/// nothing more is needed, since matching reads the current state); one thread matches them
/// against subscriptions and publishes the notifications on the bus, once, on the node that
/// committed (decisions N4); every node hands those it hears to its sinks. Publishing never
/// blocks a writer: past `capacity` pending events, new ones are dropped and counted
/// (notifications are hints; change feeds are the truth).
final class ChangeHub: Sendable {
    private let store: any Store
    private let bus: EventBus
    private let sinks: Locked<[any NotificationSink]>
    private let pending = Locked<[ChangeEvent]>([])
    private let signal = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    /// Whether `start()` ran: `stop()` of a hub never started has no thread to wait for.
    private let started = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    private let capacity: Int
    let dropped = Atomic<Int>(0)
    let delivered = Atomic<Int>(0)
    private let log: RequestLog

    init(store: any Store, bus: EventBus, log: RequestLog, capacity: Int = 100_000) {
        self.store = store
        self.bus = bus
        self.log = log
        self.capacity = capacity
        sinks = Locked([])
        bus.subscribe { [weak self] delivery in
            guard let self, case .event(let event) = delivery, case .notification(let notification) = event.body else { return }
            let own = event.origin == bus.node
            for sink in sinks.withLock({ $0 }) where own || !sink.oncePerCluster { sink.deliver(notification) }
        }
    }

    func add(_ sink: any NotificationSink) { sinks.withLock { $0.append(sink) } }

    func start() {
        started.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            while true {
                signal.wait()
                let batch = pending.withLock { events -> [ChangeEvent] in
                    defer { events.removeAll(keepingCapacity: true) }
                    return events
                }
                for event in batch { process(event) }
                if stopped.load(ordering: .acquiring) && pending.withLock({ $0.isEmpty }) { break }
            }
            exited.signal()
        }
        thread.name = "tandem-change-hub"
        thread.start()
    }

    /// Queues a committed change; cheap and non-blocking (runs in the store's after-commit hook).
    func publish(_ event: ChangeEvent) {
        let accepted = pending.withLock { events -> Bool in
            guard events.count < capacity else { return false }
            events.append(event)
            return true
        }
        if accepted { signal.signal() } else { dropped.add(1, ordering: .relaxed) }
    }

    /// Processes what is queued, then stops the thread.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing), started.load(ordering: .acquiring) else { return }
        signal.signal()
        exited.wait()
    }

    // MARK: Matching

    private func process(_ event: ChangeEvent) {
        let matched: Matches
        do {
            // Most zones have no subscriber: then matching is one statement, run alone (P72, P73).
            matched = try store.readSingleStatement { reader in try Self.match(event, reader: reader) }
        } catch {
            log.message("notification matching failed: \(error)")
            return
        }
        var notifications = matched.notifications
        if !matched.firedOnce.isEmpty {
            // A query subscription with firesOnce is deleted once it fired (CloudKit: firesOnce).
            // The delete comes first and decides: two nodes may match writes of theirs against the
            // same subscription at once, and only the one whose delete removed it fires (N61).
            let unclaimed = claim(matched.firedOnce, event: event)
            notifications.removeAll { notification in
                unclaimed.contains { $0.owner == notification.recipient && $0.id == notification.subscriptionID }
            }
        }
        for notification in notifications { bus.publish(.notification(notification)) }
        delivered.add(notifications.count, ordering: .relaxed)
    }

    /// Deletes the fired firesOnce subscriptions; returns those this node did not delete (gone
    /// already, or the delete failed), whose notifications must not be sent.
    private func claim(_ fired: [(owner: String, scope: DatabaseType, id: String)],
                       event: ChangeEvent) -> [(owner: String, scope: DatabaseType, id: String)] {
        do {
            return try store.write { tx in
                try fired.filter { fired in
                    try !tx.deleteSubscription(owner: fired.owner, container: event.container, environment: event.environment,
                                               scope: fired.scope, id: fired.id)
                }
            }
        } catch {
            log.message("deleting fired firesOnce subscriptions failed, so they do not fire: \(error)")
            return fired
        }
    }

    struct Matches {
        var notifications: [PushNotification] = []
        var firedOnce: [(owner: String, scope: DatabaseType, id: String)] = []
    }

    static func match(_ event: ChangeEvent, reader: any StoreReading) throws -> Matches {
        if event.isPublic { return try matchPublic(event, reader: reader) }
        let owner = event.zone.zoneID.ownerRecordName ?? ""
        let subscriptions = try reader.subscriptions(seeing: event.zone, container: event.container, environment: event.environment)
        var results = Matches()
        // Former participants hear that the zone left their shared database (CloudKit: a
        // database subscription fires when a share is revoked).
        for viewer in event.formerViewers {
            for stored in try reader.subscriptions(owner: viewer, container: event.container, environment: event.environment, scope: .shared)
            where stored.subscription.kind == .database {
                results.notifications.append(PushNotification(
                    recipient: viewer, subscriptionID: stored.subscription.subscriptionID, kind: "database", container: event.container,
                    environment: event.environment.rawValue, databaseScope: "SHARED", zoneID: event.zone.zoneID,
                    notificationInfo: stored.subscription.notificationInfo, originDeviceID: event.deviceID,
                    webhookURL: stored.subscription.webhookURL, webhookSecret: stored.subscription.webhookSecret,
                    timestamp: Clock.milliseconds()))
            }
        }
        guard !subscriptions.isEmpty else { return results }
        var readable: [String: [String]?] = [:]
        for stored in subscriptions {
            let isOwner = stored.owner == owner
            // The owner hears through the private database, participants through the shared one.
            guard (isOwner && stored.scope == .private) || (!isOwner && stored.scope == .shared) else { continue }
            if readable[stored.owner] == nil {
                readable[stored.owner] = try ZoneAccess.load(reader, zone: event.zone, user: stored.owner).readableMemberships
            }
            let memberships = readable[stored.owner]!
            let visible = event.records.filter { change in
                guard let memberships else { return true }
                return change.memberships.contains { $0.map(memberships.contains) ?? false }
            }
            guard !visible.isEmpty || (event.zoneChanged && isOwner) else { continue }
            let subscription = stored.subscription
            let base = PushNotification(recipient: stored.owner, subscriptionID: subscription.subscriptionID, kind: "database",
                                        container: event.container, environment: event.environment.rawValue,
                                        databaseScope: stored.scope == .shared ? "SHARED" : "PRIVATE", zoneID: event.zone.zoneID,
                                        notificationInfo: subscription.notificationInfo, originDeviceID: event.deviceID,
                                        webhookURL: subscription.webhookURL, webhookSecret: subscription.webhookSecret,
                                        timestamp: Clock.milliseconds())
            switch subscription.kind {
            case .database:
                results.notifications.append(base)
            case .zone:
                guard let zoneID = subscription.zoneID, zoneID.zoneName == event.zone.zoneID.zoneName,
                      (zoneID.ownerRecordName ?? owner) == owner, !visible.isEmpty else { continue }
                var notification = base
                notification.kind = "recordZone"
                results.notifications.append(notification)
            case .query:
                if let zoneID = subscription.zoneID, zoneID.zoneName != event.zone.zoneID.zoneName || (zoneID.ownerRecordName ?? owner) != owner {
                    continue
                }
                // As the subscriber sees it: a record moving into their shares is created for
                // them, one moving out is deleted.
                let seen = visible.map { change -> ChangeEvent.RecordChange in
                    guard let memberships, change.event == .update, change.memberships.count == 2 else { return change }
                    let before = change.memberships[0].map(memberships.contains) ?? false
                    let after = change.memberships[1].map(memberships.contains) ?? false
                    var viewed = change
                    if !before && after { viewed.event = .create }
                    if before && !after { viewed.event = .delete }
                    return viewed
                }
                try matchQuery(stored, base: base, changes: seen, zone: event.zone, memberships: memberships, reader: reader, into: &results)
            }
        }
        return results
    }

    /// A query subscription's notifications for `changes` in `zone`: created and updated records
    /// that match its filters now (read with `memberships`, nil = every record), deleted ones of
    /// its record type. `ownRecordsOnly` (a public record type only `_creator` may read): only
    /// records the subscriber created; of deletions, those whose creator the service noted
    /// (records/modify does; a tombstone no longer says who created the record).
    static func matchQuery(_ stored: StoredSubscription, base: PushNotification, changes: [ChangeEvent.RecordChange],
                                   zone: StoredZone, memberships: [String]?, ownRecordsOnly: Bool = false,
                                   reader: any StoreReading, into results: inout Matches) throws {
        let subscription = stored.subscription
        guard var query = subscription.query else { return }
        let candidates = changes.filter {
            $0.recordType == query.recordType && subscription.firesOn.contains($0.event)
                && !(ownRecordsOnly && $0.event == .delete && $0.creator != stored.owner)
        }
        guard !candidates.isEmpty else { return }
        if ownRecordsOnly {
            query.filters.append(Filter(comparator: .equals, field: .system(.createdUserRecordName), value: .string(stored.owner)))
        }
        // Created and updated records must match the filters now; deleted ones matched by type.
        var matching = Set<String>()
        var fields: [String: JSONObject] = [:]
        let live = candidates.filter { $0.event != .delete }.map(\.recordName)
        if !live.isEmpty {
            var restricted = query
            restricted.sorts = []
            restricted.filters.append(Filter(comparator: .in, field: .system(.recordName), value: .list(live.map { .string($0) }, of: .string)))
            let found = try reader.query(restricted, zones: [zone], limit: live.count, after: nil, memberships: memberships).map(\.record)
            matching = Set(found.map(\.recordName))
            let wanted = PushNotification.additionalFields(subscription.notificationInfo)
            if !wanted.isEmpty {
                for record in found { fields[record.recordName] = PushNotification.fieldValues(record, wanted) }
            }
        }
        for change in candidates where change.event == .delete || matching.contains(change.recordName) {
            var notification = base
            notification.kind = "query"
            notification.recordName = change.recordName
            notification.recordType = change.recordType
            notification.fields = fields[change.recordName]
            notification.queryReason = switch change.event {
            case .create: "recordCreated"
            case .update: "recordUpdated"
            case .delete: "recordDeleted"
            }
            results.notifications.append(notification)
            if subscription.firesOnce {
                results.firedOnce.append((stored.owner, stored.scope, subscription.subscriptionID))
                break
            }
        }
    }
}
