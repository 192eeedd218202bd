internal import Foundation
import TandemCore

/// Keeps one database (private or shared) in step with a device (CloudKit's `CKSyncEngine`).
///
/// ```swift
/// let engine = SyncEngine(configuration: .init(database: container.privateDatabase,
///                                              stateSerialization: savedState, delegate: store))
/// engine.state.add(pendingRecordZoneChanges: [.saveRecord(note.recordID)])   // sent soon
/// // store.handleEvent: persist .stateUpdate, apply .fetchedRecordZoneChanges, merge conflicts
/// ```
///
/// - Fetching: changes/database from the saved database token, then changes/zone for every
///   changed zone from its token, page by page (`moreComing`). A `changeTokenExpired` token is
///   dropped and that feed refetched from the beginning (everything visible now, no deletions:
///   decisions S3, S6; a zone says so first with `recordZoneChangesRestarted`). Deleted zones
///   lose their token.
/// - Sending: pending zone changes first (zones/modify), then batches of ≤ 200 record changes
///   from the delegate, sent per zone with `.ifServerRecordUnchanged`. Successes leave the queue;
///   retryable failures (`TandemError.isRetryable`, `batchRequestFailed`) stay and are tried again
///   in the next run; other failures leave it and are reported (`serverRecordChanged` carries the
///   server record: merge and queue the save again).
/// - Automatic sync (`automaticallySync`): the engine saves a database subscription
///   (`subscriptionID`), listens on `Container.notifications`, fetches on every push and on every
///   (re)connection of the stream (catching up on what it missed), and sends shortly after pending
///   changes are added.
/// - One fetch or send runs at a time; events reach the delegate one by one, in order.
///
/// A local store (a SQLite mirror) sits on top: it is the delegate, writes fetched records and the
/// state serialization in one transaction per event, and turns pending IDs into records at send time.
public final class SyncEngine: Sendable {
    /// `CKSyncEngine.Configuration`.
    public struct Configuration: Sendable {
        /// The private or shared database (one engine per database).
        public var database: Database
        /// The last `stateUpdate`'s serialization; nil on first launch (everything is fetched).
        public var stateSerialization: State.Serialization?
        /// Receives events and builds send batches; held strongly for the engine's lifetime.
        public var delegate: any SyncEngineDelegate
        /// Fetch on pushes and send after changes are added, without being asked.
        public var automaticallySync: Bool
        /// The database subscription automatic sync creates and listens to.
        public var subscriptionID: String
        /// How long after the last added pending change an automatic send starts.
        public var sendDelay: Double

        public init(database: Database, stateSerialization: State.Serialization?, delegate: any SyncEngineDelegate,
                    automaticallySync: Bool = true, subscriptionID: String = "tandem-sync-engine", sendDelay: Double = 0.2) {
            self.database = database
            self.stateSerialization = stateSerialization
            self.delegate = delegate
            self.automaticallySync = automaticallySync
            self.subscriptionID = subscriptionID
            self.sendDelay = sendDelay
        }
    }

    /// Records asked for per changes/zone page: the server's maximum (`Limits.changesPerResponse`),
    /// so a fresh device mirrors in few round trips (K17).
    static let fetchPageSize = 1000

    /// The database this engine keeps in step (`CKSyncEngine.database`).
    public let database: Database
    /// Tokens and pending queues; add changes here (`CKSyncEngine.state`).
    public let state: State
    let delegate: any SyncEngineDelegate
    let configuration: Configuration
    private let gate = AsyncGate()
    let background = Background()
    /// Read-only listeners told every event after the delegate (`ShareObserver`), in order.
    private let taps = Locked<[@Sendable (Event) -> Void]>([])

    public init(configuration: Configuration) {
        self.configuration = configuration
        database = configuration.database
        delegate = configuration.delegate
        state = State(configuration.stateSerialization)
        state.onPendingChange = { [weak self] in self?.pendingChanged() }
        if configuration.automaticallySync { startListening() }
    }

    deinit { background.cancelAll() }

    /// Stops the engine: no automatic fetch or send starts any more, and this returns once the
    /// fetch or send running now has finished (its events delivered). Idempotent. Afterwards
    /// `fetchChanges()` and `sendChanges()` throw `operationCancelled`.
    public func stop() async {
        background.cancelAll()
        await gate.acquire()
        gate.release()
    }

    /// Whether `stop()` was called.
    public var isStopped: Bool { background.isCancelled }

    private func checkRunning() throws(TandemError) {
        if background.isCancelled { throw TandemError(.operationCancelled, "the sync engine was stopped") }
    }

    /// Whether the engine holds a change token for the zone (it has fetched it from the server).
    func hasFetched(_ zoneID: RecordZone.ID) -> Bool { state.read { $0.zoneTokens[zoneID] != nil } }

    /// The outcome of earlier sends is not known (a relaunch with unsent changes): fetch before
    /// the next send (K25).
    func markOutcomeUnknown() { state.update { $0.outcomeUnknown = true } }

    // MARK: Fetching

    /// Fetches what changed on the server since the saved tokens and reports it to the delegate
    /// (`CKSyncEngine.fetchChanges()`). Throws what stopped the run (network, `notAuthenticated`);
    /// zones not fetched yet stay in `zoneIDsWithUnfetchedServerChanges` for the next run.
    public func fetchChanges() async throws(TandemError) {
        await gate.acquire()
        defer { gate.release() }
        try checkRunning()
        try await fetchHoldingGate()
    }

    private func fetchHoldingGate() async throws(TandemError) {
        await emit(.willFetchChanges)
        do throws(TandemError) {
            try await checkAccount()
            try await fetchDatabaseChanges()
            while let zoneID = state.read({ $0.zonesToFetch.first }) {
                try await fetchZone(zoneID)
            }
            if state.read({ $0.outcomeUnknown }) { state.update { $0.outcomeUnknown = false } }
            await emitStateUpdateIfNeeded()
            await emit(.didFetchChanges(error: nil))
        } catch {
            await emitStateUpdateIfNeeded()
            await emit(.didFetchChanges(error: error))
            throw error
        }
    }

    private func fetchDatabaseChanges() async throws(TandemError) {
        var expiredOnce = false
        // After an expired token: the zones known before, and those the listing from the start named.
        var knownBeforeExpiry: Set<RecordZone.ID>?
        var listed = Set<RecordZone.ID>()
        while true {
            let token = state.read { $0.databaseToken }
            let changes: DatabaseChanges
            do throws(TandemError) { changes = try await database.databaseChanges(since: token) } catch {
                guard error.code == .changeTokenExpired, token != nil, !expiredOnce else { throw error }
                expiredOnce = true
                knownBeforeExpiry = state.read { Set($0.zoneTokens.keys).union($0.zonesToFetch) }
                state.update { $0.databaseToken = nil }
                continue
            }
            listed.formUnion(changes.modifications)
            // In the server's order (K28): a zone deleted and then modified again is reported as
            // both (the delegate drops it, then it is fetched from the start); one modified and
            // then deleted only as deleted.
            var modifications: [RecordZone.ID] = []
            var deletions: [FetchedDatabaseChanges.Deletion] = []
            for change in changes.changes {
                switch change {
                case .modified(let zoneID):
                    if !modifications.contains(zoneID) { modifications.append(zoneID) }
                case .deleted(let deletion):
                    modifications.removeAll { $0 == deletion.zoneID }
                    deletions.removeAll { $0.zoneID == deletion.zoneID }
                    deletions.append(.init(zoneID: deletion.zoneID, reason: .init(server: deletion.reason)))
                }
            }
            // A listing from the start has no tombstones: zones known before and not listed are gone (K15).
            if let known = knownBeforeExpiry, !changes.moreComing {
                let reported = Set(deletions.map(\.zoneID))
                for zoneID in known.subtracting(listed).subtracting(reported).sorted(by: { $0.description < $1.description }) {
                    deletions.append(.init(zoneID: zoneID, reason: .deleted))
                }
            }
            if !modifications.isEmpty || !deletions.isEmpty {
                await emit(.fetchedDatabaseChanges(FetchedDatabaseChanges(modifications: modifications, deletions: deletions)))
            }
            state.update { data in
                for deletion in deletions {
                    data.zoneTokens[deletion.zoneID] = nil
                    data.zonesToFetch.removeAll { $0 == deletion.zoneID }
                }
                for zoneID in modifications where !data.zonesToFetch.contains(zoneID) { data.zonesToFetch.append(zoneID) }
                data.databaseToken = changes.changeToken
            }
            await emitStateUpdateIfNeeded()
            if !changes.moreComing { return }
        }
    }

    private func fetchZone(_ zoneID: RecordZone.ID) async throws(TandemError) {
        await emit(.willFetchRecordZoneChanges(zoneID: zoneID))
        var expiredOnce = false
        while true {
            let token = state.read { $0.zoneTokens[zoneID] }
            let changes: RecordZoneChanges
            do throws(TandemError) { changes = try await database.recordZoneChanges(inZoneWith: zoneID, since: token, resultsLimit: Self.fetchPageSize) } catch {
                if error.code == .changeTokenExpired, token != nil, !expiredOnce {
                    expiredOnce = true
                    state.update { $0.zoneTokens[zoneID] = nil }
                    await emitStateUpdateIfNeeded()
                    await emit(.recordZoneChangesRestarted(zoneID: zoneID))
                    continue
                }
                if error.code == .zoneNotFound || error.code == .userDeletedZone {
                    state.update { data in
                        data.zoneTokens[zoneID] = nil
                        data.zonesToFetch.removeAll { $0 == zoneID }
                    }
                    await emitStateUpdateIfNeeded()
                    await emit(.didFetchRecordZoneChanges(zoneID: zoneID, error: error))
                    return
                }
                await emit(.didFetchRecordZoneChanges(zoneID: zoneID, error: error))
                throw error
            }
            if !changes.modifications.isEmpty || !changes.deletions.isEmpty {
                await emit(.fetchedRecordZoneChanges(FetchedRecordZoneChanges(
                    modifications: changes.modifications,
                    deletions: changes.deletions.map { .init(recordID: $0.recordID, recordType: $0.recordType) })))
            }
            state.update { data in
                data.zoneTokens[zoneID] = changes.changeToken
                if !changes.moreComing { data.zonesToFetch.removeAll { $0 == zoneID } }
            }
            await emitStateUpdateIfNeeded()
            if !changes.moreComing { break }
        }
        await emit(.didFetchRecordZoneChanges(zoneID: zoneID, error: nil))
    }

    // MARK: Sending

    /// Sends the pending changes (`CKSyncEngine.sendChanges()`): zones, then record batches from
    /// the delegate, each pending change tried at most once per run. Per-item failures are
    /// reported in `sentDatabaseChanges`/`sentRecordZoneChanges`; a request that fails as a whole
    /// (after the transport's retries) reports its items as failed, keeps them queued when the
    /// error is retryable, ends the run and is thrown.
    public func sendChanges(_ options: SendChangesOptions = SendChangesOptions()) async throws(TandemError) {
        try await send(SendChangesContext(reason: .manual, options: options))
    }

    private func send(_ context: SendChangesContext) async throws(TandemError) {
        await gate.acquire()
        defer { gate.release() }
        try checkRunning()
        let hasWork = state.read { !$0.zones.isEmpty || $0.records.contains { context.options.scope.contains($0.change) } }
        guard hasWork else {
            await emitStateUpdateIfNeeded()
            return
        }
        // A request whose answer never came may have been applied, and other devices may have
        // acted on it since (deleted the record it created): fetch before sending again, so a
        // create is not repeated over a deletion (K25).
        if state.read({ $0.outcomeUnknown }) { try await fetchHoldingGate() }
        await emit(.willSendChanges(context))
        var failure: TandemError?
        do throws(TandemError) {
            try await sendZones()
            // A zone this engine never fetched is fetched before its first send: with a token, a
            // create whose answer is lost can later be checked against the feed's deletions (K25).
            let unfetched = state.read { data in
                Set(data.records.map(\.change.recordID.zoneID)).filter { data.zoneTokens[$0] == nil }.sorted { $0.description < $1.description }
            }
            for zoneID in unfetched { try await fetchZone(zoneID) }
            try await sendRecords(context)
        } catch { failure = error }
        await emitStateUpdateIfNeeded()
        await emit(.didSendChanges(context))
        if let failure { throw failure }
    }

    private static func keep(_ error: TandemError) -> Bool { error.isRetryable || error.code == .batchRequestFailed }

    private func sendZones() async throws(TandemError) {
        let entries = state.read { $0.zones }
        guard !entries.isEmpty else { return }
        var saves: [RecordZone] = []
        var deletes: [RecordZone.ID] = []
        for entry in entries {
            switch entry.change {
            case .saveZone(let zone): saves.append(zone)
            case .deleteZone(let id): deletes.append(id)
            }
        }
        var sent = SentDatabaseChanges(savedZones: [], failedZoneSaves: [], deletedZoneIDs: [], failedZoneDeletes: [:])
        var done: [RecordZone.ID] = []
        var thrown: TandemError?
        do throws(TandemError) {
            let results = try await database.modifyRecordZones(saving: saves, deleting: deletes)
            for zone in saves {
                switch results.saveResults[zone.zoneID] {
                case .success(let saved): sent.savedZones.append(saved); done.append(zone.zoneID)
                case .failure(let error):
                    sent.failedZoneSaves.append(.init(zone: zone, error: error))
                    if !Self.keep(error) { done.append(zone.zoneID) }
                case nil: break
                }
            }
            for id in deletes {
                switch results.deleteResults[id] {
                case .success: sent.deletedZoneIDs.append(id); done.append(id)
                case .failure(let error):
                    sent.failedZoneDeletes[id] = error
                    if !Self.keep(error) { done.append(id) }
                case nil: break
                }
            }
        } catch {
            thrown = error
            sent.failedZoneSaves = saves.map { .init(zone: $0, error: error) }
            for id in deletes { sent.failedZoneDeletes[id] = error }
            if !Self.keep(error) { done = saves.map(\.zoneID) + deletes }
        }
        state.update { data in
            data.zones.removeAll { entry in
                done.contains(entry.change.zoneID) && entries.contains { $0.change == entry.change && $0.sequence == entry.sequence }
            }
            // A deleted zone's records are gone with it: forget its token and pending changes there.
            for id in sent.deletedZoneIDs {
                data.zoneTokens[id] = nil
                data.records.removeAll { $0.change.recordID.zoneID == id }
            }
        }
        await emitStateUpdateIfNeeded()
        await emit(.sentDatabaseChanges(sent))
        if let thrown { throw thrown }
    }

    private struct Attempt: Hashable { var change: PendingRecordZoneChange; var sequence: Int }

    private func sendRecords(_ context: SendChangesContext) async throws(TandemError) {
        var attempted = Set<Attempt>()
        while true {
            guard let batch = await delegate.nextRecordZoneChangeBatch(context, syncEngine: self) else { return }
            let entries = state.read { $0.records }
            func sequence(_ change: PendingRecordZoneChange) -> Int { entries.first { $0.change == change }?.sequence ?? -1 }
            // Each pending change at most once per run; changes queued again since count as new.
            let saves = batch.recordsToSave.filter { !attempted.contains(Attempt(change: .saveRecord($0.recordID), sequence: sequence(.saveRecord($0.recordID)))) }
            let deletes = batch.recordIDsToDelete.filter { !attempted.contains(Attempt(change: .deleteRecord($0), sequence: sequence(.deleteRecord($0)))) }
            if !batch.skippedSaves.isEmpty {
                let skipped = batch.skippedSaves.map { PendingRecordZoneChange.saveRecord($0) }
                state.update { data in data.records.removeAll { skipped.contains($0.change) } }
            }
            if saves.isEmpty && deletes.isEmpty {
                if batch.skippedSaves.isEmpty { return }
                continue
            }
            for record in saves { attempted.insert(Attempt(change: .saveRecord(record.recordID), sequence: sequence(.saveRecord(record.recordID)))) }
            for id in deletes { attempted.insert(Attempt(change: .deleteRecord(id), sequence: sequence(.deleteRecord(id)))) }

            var sent = SentRecordZoneChanges(savedRecords: [], failedRecordSaves: [], deletedRecordIDs: [], failedRecordDeletes: [:])
            var finished: [Attempt] = []   // leave the queue
            var retained: [Attempt] = []   // stay, moved to the back
            var thrown: TandemError?
            var zones: [RecordZone.ID] = []
            for id in saves.map(\.recordID) + deletes where !zones.contains(id.zoneID) { zones.append(id.zoneID) }
            for zoneID in zones {
                let zoneSaves = saves.filter { $0.recordID.zoneID == zoneID }
                let zoneDeletes = deletes.filter { $0.zoneID == zoneID }
                func attempt(save id: Record.ID) -> Attempt { Attempt(change: .saveRecord(id), sequence: sequence(.saveRecord(id))) }
                func attempt(delete id: Record.ID) -> Attempt { Attempt(change: .deleteRecord(id), sequence: sequence(.deleteRecord(id))) }
                if thrown != nil {
                    for record in zoneSaves { sent.failedRecordSaves.append(.init(record: record, error: thrown!)); retained.append(attempt(save: record.recordID)) }
                    for id in zoneDeletes { sent.failedRecordDeletes[id] = thrown!; retained.append(attempt(delete: id)) }
                    continue
                }
                do throws(TandemError) {
                    let result = try await database.modifyRecords(saving: zoneSaves, deleting: zoneDeletes,
                                                                  savePolicy: .ifServerRecordUnchanged, atomically: batch.atomicByZone,
                                                                  retryingLostAnswers: false)
                    for record in zoneSaves {
                        switch result.saveResults[record.recordID] {
                        case .success(let saved): sent.savedRecords.append(saved); finished.append(attempt(save: record.recordID))
                        case .failure(let error):
                            sent.failedRecordSaves.append(.init(record: record, error: error))
                            if Self.keep(error) { retained.append(attempt(save: record.recordID)) } else { finished.append(attempt(save: record.recordID)) }
                        case nil:
                            state.update { $0.outcomeUnknown = true }
                            retained.append(attempt(save: record.recordID))
                        }
                    }
                    for id in zoneDeletes {
                        switch result.deleteResults[id] {
                        case .success: sent.deletedRecordIDs.append(id); finished.append(attempt(delete: id))
                        case .failure(let error):
                            sent.failedRecordDeletes[id] = error
                            // Deleting what is already gone is done.
                            if error.code == .unknownItem { sent.failedRecordDeletes[id] = nil; sent.deletedRecordIDs.append(id); finished.append(attempt(delete: id)) }
                            else if Self.keep(error) { retained.append(attempt(delete: id)) } else { finished.append(attempt(delete: id)) }
                        case nil: retained.append(attempt(delete: id))
                        }
                    }
                } catch {
                    let keep = Self.keep(error)
                    if !error.needsSignIn { state.update { $0.outcomeUnknown = true } }
                    for record in zoneSaves {
                        sent.failedRecordSaves.append(.init(record: record, error: error))
                        (keep ? { retained.append(attempt(save: record.recordID)) } : { finished.append(attempt(save: record.recordID)) })()
                    }
                    for id in zoneDeletes {
                        sent.failedRecordDeletes[id] = error
                        (keep ? { retained.append(attempt(delete: id)) } : { finished.append(attempt(delete: id)) })()
                    }
                    thrown = error
                }
            }
            state.update { data in
                data.records.removeAll { finished.contains(Attempt(change: $0.change, sequence: $0.sequence)) }
                let back = data.records.filter { retained.contains(Attempt(change: $0.change, sequence: $0.sequence)) }
                data.records.removeAll { retained.contains(Attempt(change: $0.change, sequence: $0.sequence)) }
                data.records.append(contentsOf: back)
            }
            await emitStateUpdateIfNeeded()
            await emit(.sentRecordZoneChanges(sent))
            if let thrown { throw thrown }
        }
    }

    // MARK: Events and automatic sync

    func emit(_ event: Event) async {
        await delegate.handleEvent(event, syncEngine: self)
        for tap in taps.withLock({ $0 }) { tap(event) }
    }

    /// Adds a listener that sees every event after the delegate has handled it, on the engine's
    /// run (so in order, one at a time). It must be quick and must not call the engine.
    func addTap(_ tap: @escaping @Sendable (Event) -> Void) {
        taps.withLock { $0.append(tap) }
    }

    func emitStateUpdateIfNeeded() async {
        if let serialization = state.takeSerializationIfDirty() {
            await emit(.stateUpdate(stateSerialization: serialization))
        }
    }

    /// After the app changed the queues: report the new state, and with automatic sync send soon.
    private func pendingChanged() {
        let generation = background.nextSendGeneration()
        let delay = configuration.automaticallySync ? configuration.sendDelay : 0
        let automatic = configuration.automaticallySync
        background.add(Task { [weak self] in
            if automatic { try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) }
            guard let self, !Task.isCancelled else { return }
            if automatic, self.background.isLatestSend(generation) {
                try? await self.send(SendChangesContext(reason: .scheduled, options: SendChangesOptions()))
            } else {
                await self.gate.acquire()
                await self.emitStateUpdateIfNeeded()
                self.gate.release()
            }
        })
    }

    /// Schedules a fetch unless one is already waiting to start.
    private func scheduleFetch() {
        guard background.markFetchScheduled() else { return }
        background.add(Task { [weak self] in
            guard let self else { return }
            self.background.clearFetchScheduled()
            do { try await self.fetchChanges() } catch { return }
            // Edits made while offline (a failed send) go out once the server answers again (K14).
            if self.configuration.automaticallySync, !self.state.read({ $0.records.isEmpty && $0.zones.isEmpty }) {
                try? await self.send(SendChangesContext(reason: .scheduled, options: SendChangesOptions()))
            }
        })
    }

    private func startListening() {
        let database = configuration.database
        let subscriptionID = configuration.subscriptionID
        background.add(Task { [weak self] in
            if self?.state.read({ $0.subscriptionID }) != subscriptionID {
                do throws(TandemError) {
                    try await database.save(DatabaseSubscription(subscriptionID: subscriptionID))
                } catch where error.code == .serverRecordChanged {
                    // It exists already (EXISTS).
                } catch {
                    // Pushes will not come; fetches on (re)connection and explicit fetches still work.
                }
                self?.state.update { $0.subscriptionID = subscriptionID }
            }
            let notifications = Notifications(transport: database.transport, onConnected: { [weak self] in self?.scheduleFetch() })
            do {
                for try await notification in notifications {
                    guard let self else { return }
                    if notification.subscriptionID == subscriptionID,
                       notification.databaseScope == nil || notification.databaseScope == database.databaseScope {
                        self.scheduleFetch()
                    }
                }
            } catch {}
        })
    }
}
