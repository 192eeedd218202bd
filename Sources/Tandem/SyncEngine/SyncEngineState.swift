internal import Foundation

extension SyncEngine {
    /// What the engine knows (`CKSyncEngine.State`): change tokens, zones still to fetch and the
    /// pending-change queues. Thread-safe; adding changes with automatic sync schedules a send.
    public final class State: @unchecked Sendable {
        /// The state as a `Codable` value (`CKSyncEngine.State.Serialization`), handed out in
        /// `stateUpdate` events. Opaque: persist it (e.g. with `JSONEncoder`) and pass it back in
        /// `Configuration.stateSerialization`. Holds the database token, each zone's token, the
        /// zones with unfetched changes, the pending queues and the subscription the engine made.
        public struct Serialization: Codable, Sendable, Hashable {
            struct Zone: Codable, Hashable { var zoneName: String; var ownerName: String }
            struct ZoneToken: Codable, Hashable { var zone: Zone; var token: ServerChangeToken }
            struct Change: Codable, Hashable { var delete: Bool; var recordName: String?; var zone: Zone }

            var version = 1
            var databaseToken: ServerChangeToken?
            var zoneTokens: [ZoneToken] = []
            var zonesToFetch: [Zone] = []
            var pendingRecordZoneChanges: [Change] = []
            var pendingDatabaseChanges: [Change] = []
            var subscriptionID: String?
            var userRecordName: String?
        }

        struct Entry<Change: Hashable> { var change: Change; var sequence: Int }

        struct Data {
            var databaseToken: ServerChangeToken?
            var zoneTokens: [RecordZone.ID: ServerChangeToken] = [:]
            var zonesToFetch: [RecordZone.ID] = []
            var records: [Entry<PendingRecordZoneChange>] = []
            var zones: [Entry<PendingDatabaseChange>] = []
            var subscriptionID: String?
            var userRecordName: String?
            var nextSequence = 0
            var dirty = false
            /// A send's answer was lost: fetch before the next send (K25). Not saved: a relaunch
            /// with pending changes sets it again.
            var outcomeUnknown = false

            /// Appends `changes` to a queue in order, each replacing a pending change of the same target.
            mutating func enqueue<Change: Hashable>(_ changes: [Change], in queue: WritableKeyPath<Data, [Entry<Change>]>,
                                                  sameTarget: (Change, Change) -> Bool) {
                for change in changes {
                    self[keyPath: queue].removeAll { sameTarget($0.change, change) }
                    self[keyPath: queue].append(Entry(change: change, sequence: nextSequence))
                    nextSequence += 1
                }
            }
        }

        private let lock = NSLock()
        private var data = Data()
        /// Set by the engine: called after the app adds or removes pending changes.
        var onPendingChange: (@Sendable () -> Void)?

        init(_ serialization: Serialization?) {
            guard let s = serialization else { return }
            func zone(_ z: Serialization.Zone) -> RecordZone.ID { RecordZone.ID(zoneName: z.zoneName, ownerName: z.ownerName) }
            data.databaseToken = s.databaseToken
            for t in s.zoneTokens { data.zoneTokens[zone(t.zone)] = t.token }
            data.zonesToFetch = s.zonesToFetch.map(zone)
            // A serialization holds at most one change per target, so nothing is replaced here.
            data.enqueue(s.pendingRecordZoneChanges.map { c in
                let id = Record.ID(recordName: c.recordName ?? "", zoneID: zone(c.zone))
                return c.delete ? .deleteRecord(id) : .saveRecord(id)
            }, in: \.records) { _, _ in false }
            data.enqueue(s.pendingDatabaseChanges.map { c in
                let id = zone(c.zone)
                return c.delete ? .deleteZone(id) : .saveZone(RecordZone(zoneID: id))
            }, in: \.zones) { _, _ in false }
            data.subscriptionID = s.subscriptionID
            data.userRecordName = s.userRecordName
        }

        // MARK: App-facing

        /// Record saves and deletions not yet sent, oldest first.
        public var pendingRecordZoneChanges: [PendingRecordZoneChange] { lock.withLock { data.records.map(\.change) } }
        /// Zone saves and deletions not yet sent, oldest first.
        public var pendingDatabaseChanges: [PendingDatabaseChange] { lock.withLock { data.zones.map(\.change) } }
        /// Zones the database feed reported changed whose records are not fetched yet.
        public var zoneIDsWithUnfetchedServerChanges: [RecordZone.ID] { lock.withLock { data.zonesToFetch } }

        /// Queues record changes. A save replaces a pending deletion of the same record and the
        /// other way round; queuing a change already pending keeps one.
        public func add(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            changeQueue { data in data.enqueue(changes, in: \.records) { $0.recordID == $1.recordID } }
        }

        /// Drops queued record changes (e.g. the app gave up on them).
        public func remove(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            changeQueue { data in data.records.removeAll { changes.contains($0.change) } }
        }

        /// Queues zone changes; as for records, the latest change of a zone wins.
        public func add(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            changeQueue { data in data.enqueue(changes, in: \.zones) { $0.zoneID == $1.zoneID } }
        }

        /// Drops queued zone changes.
        public func remove(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            changeQueue { data in data.zones.removeAll { changes.contains($0.change) } }
        }

        /// Applies an app-made change to the queues, marks the state dirty and tells the engine.
        private func changeQueue(_ body: (inout Data) -> Void) {
            lock.withLock {
                body(&data)
                data.dirty = true
            }
            onPendingChange?()
        }

        // MARK: Engine-facing

        func read<T>(_ body: (Data) -> T) -> T { lock.withLock { body(data) } }

        func update<T>(_ body: (inout Data) -> T) -> T {
            lock.withLock {
                data.dirty = true
                return body(&data)
            }
        }

        /// The serialization when something changed since the last one taken, else nil.
        func takeSerializationIfDirty() -> Serialization? {
            lock.withLock {
                guard data.dirty else { return nil }
                data.dirty = false
                return serialization(data)
            }
        }

        /// The current state as a serialization.
        public var serialization: Serialization { lock.withLock { serialization(data) } }

        private func serialization(_ d: Data) -> Serialization {
            func zone(_ id: RecordZone.ID) -> Serialization.Zone { .init(zoneName: id.zoneName, ownerName: id.ownerName) }
            var s = Serialization()
            s.databaseToken = d.databaseToken
            s.zoneTokens = d.zoneTokens.map { .init(zone: zone($0.key), token: $0.value) }
                .sorted { ($0.zone.zoneName, $0.zone.ownerName) < ($1.zone.zoneName, $1.zone.ownerName) }
            s.zonesToFetch = d.zonesToFetch.map(zone)
            s.pendingRecordZoneChanges = d.records.map {
                switch $0.change {
                case .saveRecord(let id): .init(delete: false, recordName: id.recordName, zone: zone(id.zoneID))
                case .deleteRecord(let id): .init(delete: true, recordName: id.recordName, zone: zone(id.zoneID))
                }
            }
            s.pendingDatabaseChanges = d.zones.map { .init(delete: { if case .deleteZone = $0.change { true } else { false } }($0),
                                                           recordName: nil, zone: zone($0.change.zoneID)) }
            s.subscriptionID = d.subscriptionID
            s.userRecordName = d.userRecordName
            return s
        }
    }
}
