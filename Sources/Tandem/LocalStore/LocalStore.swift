public import Foundation
internal import TandemCore
internal import TandemSQLite

/// A SQLite file on the device mirroring the user's private and shared databases
/// (`NSPersistentCloudKitContainer`'s role, with its sharing API).
///
/// ```swift
/// let store = try LocalStore(container: container, fileURL: URL(fileURLWithPath: "notes.sqlite"))
/// var note = Record(recordType: "Note")
/// note["text"] = "Buy milk"
/// try store.save([note])                         // works offline; sent when online
/// let (moved, share) = try await store.share([note.recordID], to: nil)   // new zone + zone-wide share, related records too
/// let notes = try store.records(matching: Query(recordType: "Note"))   // private and shared
/// ```
///
/// - Two `SyncEngine`s (private, shared) fetch into the file: one transaction per fetched page.
///   Their state serializations live in the same file, so a relaunch continues where it stopped.
/// - `save`/`delete` write the file at once and queue the change; with `automaticallySync` the
///   engines send shortly after, and after every (re)connection of the push stream. A record the
///   store holds is saved by its changed keys on top of the newest row (a stale copy does not
///   undo fetched changes). Unsent edits survive relaunches (dirty rows and tombstones).
/// - Conflicts (`serverRecordChanged`, or a fetched newer record meeting unsent keys, K33) go
///   to `Configuration.merge` with the local and server records; its result is sent again (default: the server's record with the locally changed
///   keys on top, decision K16). Each unsent key remembers the edit that changed it, so an answer
///   or a merge clears only what was sent and an edit made meanwhile is kept (K23).
/// - Nothing is dropped silently (K32): a change refused for good, a deleted record's unsent edit
///   and a lost zone's unsent changes each come as a `Change` carrying the record.
/// - One store per file in a process; `close()` waits for the engines before the file closes (K29).
/// - Record IDs say the database: zones owned by `__defaultOwner__` are private, others shared.
public final class LocalStore: Sendable {
    /// The record changed on the server while this device had unsent edits of it: a save the
    /// server refused (`serverRecordChanged`), or a fetched newer version meeting unsent keys
    /// it does not already hold (K33).
    public struct Conflict: Sendable {
        /// The record as this device has it (local edits applied, old change tag).
        public var localRecord: Record
        /// The record as the server has it now.
        public var serverRecord: Record
        /// The keys edited on this device and not yet sent.
        public var changedKeys: [String]
    }

    /// What changed in the store; delivered on `Configuration.observer` (any thread).
    public enum Change: Sendable {
        /// Records written or deleted by a fetch.
        case fetched(saved: [Record.ID], deleted: [Record.ID])
        /// Local changes the server accepted.
        case sent(saved: [Record.ID], deleted: [Record.ID])
        /// A save, or a fetch, met a newer server record while the record had unsent edits here;
        /// `Configuration.merge` decided and its result is sent (K33).
        case conflict(Record.ID)
        /// A record with unsent local edits was deleted on the server. The deletion wins (as in
        /// CloudKit, where saving a deleted record fails with `unknownItem`, and in
        /// NSPersistentCloudKitContainer); `record` is the local version that was dropped: save it
        /// again as a new record to keep it (decision K22).
        case deletedWhileEdited(Record)
        /// A change the server refused for good (`permissionFailure`, `unknownItem`, `zoneNotFound`
        /// after the user lost access, `limitExceeded` for a record over 1 MiB, ...); the row now
        /// shows the server's state (or nothing). `record` is the local version that was not kept:
        /// save it again (changed, or as a new record) to keep it (K26).
        case refused(Record, TandemError)
        /// Zones (and their records) removed: deleted, purged, or access lost.
        case zonesRemoved([RecordZone.ID])
        /// A zone left the store (deleted, purged, access lost) while it held unsent edits or
        /// deletions: `records` are the local versions that were not sent, `deletedRecordIDs` the
        /// deletions (K27). Save the records into a zone the user can write to keep them.
        case unsentChangesLost(RecordZone.ID, records: [Record], deletedRecordIDs: [Record.ID])
        /// The account changed; that database's data was removed.
        case accountChanged(Database.Scope)
        /// Writing an event into the file failed.
        case failed(TandemError)
    }

    /// How a store is opened (`NSPersistentCloudKitContainerOptions`' role).
    public struct Configuration: Sendable {
        /// The SQLite file (created when missing).
        public var fileURL: URL
        /// Fetch on pushes and (re)connections, send shortly after edits (see `SyncEngine`).
        public var automaticallySync: Bool
        /// Seconds between the last edit and an automatic send.
        public var sendDelay: Double
        /// Resolves a conflict: the record to send again (its change tag is set to the server's),
        /// or nil to take the server's record and drop the local edits.
        public var merge: @Sendable (Conflict) -> Record?
        /// Told about every change of the file (optional).
        public var observer: @Sendable (Change) -> Void
        /// Fields to index for local queries (as a Core Data model's fetch indexes): an equality
        /// or range filter on one of them reads the index instead of every record of the type.
        public var indexes: [Index]

        /// Defaults: automatic sync, sends 0.2 s after the last edit, per-key merge (K16), no
        /// observer, no indexes.
        public init(fileURL: URL, automaticallySync: Bool = true, sendDelay: Double = 0.2,
                    merge: @escaping @Sendable (Conflict) -> Record? = LocalStore.serverRecordWithLocalChanges,
                    observer: @escaping @Sendable (Change) -> Void = { _ in }, indexes: [Index] = []) {
            self.fileURL = fileURL
            self.automaticallySync = automaticallySync
            self.sendDelay = sendDelay
            self.merge = merge
            self.observer = observer
            self.indexes = indexes
        }
    }

    /// A field of a record type indexed in the file (`Configuration.indexes`). Costs a little on
    /// every write of that type; made when the store opens (existing rows are indexed then).
    public struct Index: Sendable, Hashable {
        /// The record type whose rows are indexed.
        public var recordType: String
        /// The user field (its `value`; a reference's record name is not indexed).
        public var field: String
        public init(recordType: String, field: String) {
            self.recordType = recordType
            self.field = field
        }
    }

    /// The default merge: the server's record with this device's changed keys on top.
    public static let serverRecordWithLocalChanges: @Sendable (Conflict) -> Record? = { conflict in
        var merged = conflict.serverRecord
        for key in conflict.changedKeys { merged.fields[key] = conflict.localRecord.fields[key] }
        return merged
    }

    /// The container whose private and shared databases the file mirrors.
    public let container: Container
    /// As opened.
    public let configuration: Configuration
    /// The engine keeping the private database in step.
    public let privateEngine: SyncEngine
    /// The engine keeping the shared database (zones shared with the user) in step.
    public let sharedEngine: SyncEngine
    let mirror: LocalMirror
    private let path: String
    private let closed = Locked(false)

    /// Opens (or creates) the file and starts both engines. One store per file in a process
    /// (so one pair of engines writes it): `close()` the previous one first (K29).
    /// - Throws: `invalidArguments` when a store of this process has the file open (or is still
    ///   closing: `await close()` first); `internalError` when the file cannot be opened or has a
    ///   newer schema.
    public init(container: Container, configuration: Configuration) throws(TandemError) {
        self.container = container
        self.configuration = configuration
        let path = configuration.fileURL.standardizedFileURL.resolvingSymlinksInPath().path
        guard OpenStoreFiles.claim(path) else {
            throw TandemError(.invalidArguments, "the local store \(path) is already open in this process (or still closing): await close() on it first")
        }
        self.path = path
        do {
            let mirror = try LocalMirror(path: configuration.fileURL.path)
            self.mirror = mirror
            try mirror.createIndexes(configuration.indexes)
            privateEngine = try Self.engine(container.privateDatabase, mirror: mirror, configuration: configuration)
            sharedEngine = try Self.engine(container.sharedDatabase, mirror: mirror, configuration: configuration)
        } catch {
            OpenStoreFiles.release(path)
            throw error
        }
    }

    /// Stops both engines, waits for the fetch or send each is running, and closes the file; the
    /// file can then be opened again. Idempotent. Reads and writes afterwards throw. A store
    /// dropped without `close()` does the same in the background, and the file stays claimed
    /// until that has finished.
    public func close() async {
        guard closed.withLock({ let was = $0; $0 = true; return !was }) else { return }
        await Self.shutDown(privateEngine, sharedEngine, mirror, path)
    }

    private static func shutDown(_ privateEngine: SyncEngine, _ sharedEngine: SyncEngine, _ mirror: LocalMirror, _ path: String) async {
        await privateEngine.stop()
        await sharedEngine.stop()
        mirror.close()
        OpenStoreFiles.release(path)
    }

    deinit {
        guard closed.withLock({ let was = $0; $0 = true; return !was }) else { return }
        let (privateEngine, sharedEngine, mirror, path) = (privateEngine, sharedEngine, mirror, path)
        Task { await Self.shutDown(privateEngine, sharedEngine, mirror, path) }
    }

    private static func engine(_ database: Database, mirror: LocalMirror, configuration: Configuration) throws(TandemError) -> SyncEngine {
        let scope = database.databaseScope
        let delegate = LocalStoreSyncDelegate(scope: scope, mirror: mirror, merge: configuration.merge, observer: configuration.observer)
        let engine = SyncEngine(configuration: .init(database: database, stateSerialization: try mirror.state(scope: scope),
                                                     delegate: delegate, automaticallySync: configuration.automaticallySync,
                                                     subscriptionID: "tandem-local-store-\(scope.rawValue)",
                                                     sendDelay: configuration.sendDelay))
        // Edits not on the server yet, whatever the saved state says.
        let unsent = try mirror.unsentChanges(scope: scope)
        if !unsent.isEmpty {
            // Their last send may have been applied without an answer: fetch first (K25).
            engine.markOutcomeUnknown()
            engine.state.add(pendingRecordZoneChanges: unsent)
        }
        return engine
    }

    /// `init(container:configuration:)` with the default configuration for `fileURL`.
    public convenience init(container: Container, fileURL: URL, automaticallySync: Bool = true) throws(TandemError) {
        try self.init(container: container, configuration: Configuration(fileURL: fileURL, automaticallySync: automaticallySync))
    }

    func engine(for scope: Database.Scope) -> SyncEngine { scope == .private ? privateEngine : sharedEngine }

    // MARK: Reading

    /// The record as this device has it, local edits applied; nil when the store has none.
    public func record(for recordID: Record.ID) throws(TandemError) -> Record? {
        try mirror.record(for: recordID)
    }

    /// Records of `query.recordType` in the chosen databases matching every filter, in the
    /// query's sort order (then by record name). Evaluated on the file, no network.
    ///
    /// Filters: `equals`, `notEquals`, `lessThan(OrEquals)`, `greaterThan(OrEquals)`,
    /// `beginsWith`, `in`, `notIn` on string, number, date and reference fields and on
    /// `___recordID`; sorts on the same fields and `___createTime`/`___modTime`.
    /// - Parameter limit: at most this many records (nil: all).
    /// - Throws: `invalidArguments` for a comparator the store does not evaluate (tokens, `NEAR`,
    ///   list comparators); `internalError` for a damaged file.
    public func records(matching query: Query, in scopes: Set<Database.Scope> = [.private, .shared],
                        limit: Int? = nil) throws(TandemError) -> [Record] {
        let plan = try LocalQuery(query: query, scopes: scopes, limit: limit)
        return try mirror.read { db in
            try db.query(plan.sql, plan.arguments) { s in
                try LocalRecordCoding.decode(s.text(0), scope: Database.Scope(rawValue: s.text(1)) ?? .private)
            }
        }
    }

    /// Zones the store knows in one database.
    public func zones(in scope: Database.Scope) throws(TandemError) -> [RecordZone.ID] { try mirror.zones(scope: scope) }

    // MARK: Writing

    /// Saves records on the device and queues them for the server (works offline).
    ///
    /// A record the store already has is applied by its changed keys (`Record.changedKeys()`)
    /// onto the newest row; a new record is stored whole. A record in a private zone the store
    /// does not know yet queues that zone's creation first. Shared records need write permission
    /// (`canUpdateRecord`); a refused save is undone when the server answers.
    public func save(_ records: [Record]) throws(TandemError) {
        guard !records.isEmpty else { return }
        for record in records { try record.checkStorable() }
        let known = Set(try mirror.zones(scope: .private))
        let newZones = Set(records.map(\.recordID.zoneID).filter {
            LocalMirror.scope(of: $0) == .private && $0 != .default && !known.contains($0)
        })
        try mirror.saveLocal(records)
        if !newZones.isEmpty { privateEngine.state.add(pendingDatabaseChanges: newZones.map { .saveZone(RecordZone(zoneID: $0)) }) }
        for scope in [Database.Scope.private, .shared] {
            let ids = records.map(\.recordID).filter { LocalMirror.scope(of: $0) == scope }
            if !ids.isEmpty { engine(for: scope).state.add(pendingRecordZoneChanges: ids.map { .saveRecord($0) }) }
        }
    }

    /// Deletes records on the device and queues their deletion on the server (works offline).
    public func delete(_ recordIDs: [Record.ID]) throws(TandemError) {
        guard !recordIDs.isEmpty else { return }
        let known = Set(try mirror.deleteLocal(recordIDs))
        for scope in [Database.Scope.private, .shared] {
            let ids = recordIDs.filter { LocalMirror.scope(of: $0) == scope }
            guard !ids.isEmpty else { continue }
            let state = engine(for: scope).state
            state.remove(pendingRecordZoneChanges: ids.map { .saveRecord($0) })
            let deletes = ids.filter(known.contains)
            if !deletes.isEmpty { state.add(pendingRecordZoneChanges: deletes.map { .deleteRecord($0) }) }
        }
    }

    // MARK: Syncing

    /// Fetches both databases, then sends pending changes of both; throws the first failure
    /// (network, `notAuthenticated`). Automatic sync makes this unnecessary except in tests and
    /// command-line tools that exit.
    public func sync() async throws(TandemError) {
        try await privateEngine.fetchChanges()
        try await sharedEngine.fetchChanges()
        try await privateEngine.sendChanges()
        try await sharedEngine.sendChanges()
    }

    /// Whether local changes are still waiting for the server (queued, or in a send whose
    /// answer has not come).
    public var hasUnsentChanges: Bool {
        !privateEngine.state.pendingRecordZoneChanges.isEmpty || !sharedEngine.state.pendingRecordZoneChanges.isEmpty
            || !privateEngine.state.pendingDatabaseChanges.isEmpty
    }
}

/// The files `LocalStore`s of this process have open: one store, hence one pair of engines, per
/// file (K29). Process-wide because two stores of one file are the hazard wherever they were made.
enum OpenStoreFiles {
    private static let paths = Locked<Set<String>>([])

    static func claim(_ path: String) -> Bool { paths.withLock { $0.insert(path).inserted } }
    static func release(_ path: String) { _ = paths.withLock { $0.remove(path) } }
}
