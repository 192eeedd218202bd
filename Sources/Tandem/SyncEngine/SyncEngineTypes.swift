/// The app's side of a `SyncEngine` (CloudKit's `CKSyncEngineDelegate`).
///
/// The engine calls these one at a time, never concurrently, from its fetch and send runs. Do not
/// call `fetchChanges()` or `sendChanges()` from inside them (the engine runs one operation at a
/// time, so that would wait forever); adding pending changes to `syncEngine.state` is fine.
public protocol SyncEngineDelegate: Sendable {
    /// Something happened: persist `stateUpdate`s, apply fetched changes, react to send results.
    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async

    /// The next records to send, built from `syncEngine.state.pendingRecordZoneChanges` (usually
    /// with `RecordZoneChangeBatch(pendingChanges:recordProvider:)`); nil or empty ends the run.
    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?
}

extension SyncEngine {
    /// A record change waiting to be sent (`CKSyncEngine.PendingRecordZoneChange`).
    public enum PendingRecordZoneChange: Sendable, Hashable {
        case saveRecord(Record.ID)
        case deleteRecord(Record.ID)

        /// The record the change is about.
        public var recordID: Record.ID {
            switch self { case .saveRecord(let id), .deleteRecord(let id): id }
        }
    }

    /// A zone change waiting to be sent (`CKSyncEngine.PendingDatabaseChange`).
    public enum PendingDatabaseChange: Sendable, Hashable {
        case saveZone(RecordZone)
        case deleteZone(RecordZone.ID)

        /// The zone the change is about.
        public var zoneID: RecordZone.ID {
            switch self {
            case .saveZone(let zone): zone.zoneID
            case .deleteZone(let id): id
            }
        }
    }

    /// Why a send run happens and what it covers (`CKSyncEngine.SendChangesContext`).
    public struct SendChangesContext: Sendable {
        public enum Reason: Sendable, Hashable {
            /// Automatic sync after pending changes were added.
            case scheduled
            /// The app called `sendChanges()`.
            case manual
        }

        public var reason: Reason
        public var options: SendChangesOptions
    }

    /// Limits a send run (`CKSyncEngine.SendChangesOptions`).
    public struct SendChangesOptions: Sendable {
        public enum Scope: Sendable, Hashable {
            case all
            /// Only changes of records in these zones.
            case zoneIDs([RecordZone.ID])

            /// Whether a pending change is in this scope; filter `pendingRecordZoneChanges` with it.
            public func contains(_ change: PendingRecordZoneChange) -> Bool {
                switch self {
                case .all: true
                case .zoneIDs(let zones): zones.contains(change.recordID.zoneID)
                }
            }
        }

        public var scope: Scope
        public init(scope: Scope = .all) { self.scope = scope }
    }

    /// Records to send in one go (`CKSyncEngine.RecordZoneChangeBatch`): sent zone by zone with
    /// `records/modify` and `.ifServerRecordUnchanged`.
    public struct RecordZoneChangeBatch: Sendable {
        /// The most changes one batch takes from the pending queue (one `records/modify` per zone holds ≤ 200).
        public static let maximumSize = 200

        public var recordsToSave: [Record]
        public var recordIDsToDelete: [Record.ID]
        /// When true, a zone's changes succeed or fail together (`batchRequestFailed` for the bystanders).
        public var atomicByZone: Bool
        /// Pending saves whose record the provider no longer has: dropped from the queue.
        var skippedSaves: [Record.ID] = []

        public init(recordsToSave: [Record] = [], recordIDsToDelete: [Record.ID] = [], atomicByZone: Bool = false) {
            self.recordsToSave = recordsToSave
            self.recordIDsToDelete = recordIDsToDelete
            self.atomicByZone = atomicByZone
        }

        /// Takes up to `maximumSize` of `pendingChanges` in order, asking `recordProvider` for the
        /// full record of each save. A nil record means it no longer exists locally: that pending
        /// save is removed from the engine's state without being sent. Nil when `pendingChanges`
        /// is empty.
        public init?(pendingChanges: [PendingRecordZoneChange], atomicByZone: Bool = false,
                     recordProvider: @Sendable (Record.ID) async -> Record?) async {
            guard !pendingChanges.isEmpty else { return nil }
            self.init(atomicByZone: atomicByZone)
            for change in pendingChanges.prefix(Self.maximumSize) {
                switch change {
                case .saveRecord(let id):
                    if let record = await recordProvider(id) { recordsToSave.append(record) } else { skippedSaves.append(id) }
                case .deleteRecord(let id):
                    recordIDsToDelete.append(id)
                }
            }
        }
    }

    /// `CKSyncEngine.Event.AccountChange`. Users are told apart by their user record ID (the
    /// credentials' user): checked before the first fetch of each engine, and when the server
    /// answers `notAuthenticated`.
    public enum AccountChange: Sendable, Hashable {
        /// First run with a user, or a user after a sign-out.
        case signIn(currentUser: Record.ID)
        /// The credentials no longer name a user (`notAuthenticated`).
        case signOut(previousUser: Record.ID)
        /// The credentials name another user than the saved state's.
        case switchAccounts(previousUser: Record.ID, currentUser: Record.ID)
    }

    /// What the engine tells its delegate (`CKSyncEngine.Event`).
    public enum Event: Sendable {
        /// The state changed: persist `stateSerialization` and pass it back at the next launch.
        case stateUpdate(stateSerialization: State.Serialization)
        /// The signed-in user differs from the one the saved state was made for
        /// (`CKSyncEngine.Event.accountChange`): on `signOut`/`switchAccounts` delete the
        /// device's data of this database; the engine has already dropped its tokens and queues.
        case accountChange(AccountChange)
        /// Zones changed or went away (changes/database).
        case fetchedDatabaseChanges(FetchedDatabaseChanges)
        /// One page of record changes of one zone (changes/zone).
        case fetchedRecordZoneChanges(FetchedRecordZoneChanges)
        /// The result of sending pending zone changes (zones/modify).
        case sentDatabaseChanges(SentDatabaseChanges)
        /// The result of sending one batch of record changes (records/modify).
        case sentRecordZoneChanges(SentRecordZoneChanges)
        case willFetchChanges
        /// The fetch run ended (`error` when it stopped early).
        case didFetchChanges(error: TandemError?)
        case willFetchRecordZoneChanges(zoneID: RecordZone.ID)
        /// The zone's token expired (decisions S6), so the engine fetches it again from the start:
        /// the modifications from here to this zone's `didFetchRecordZoneChanges` are everything
        /// the zone holds now, and deletions made meanwhile are not reported. Delete local records
        /// of the zone that are not among them. (Tandem's addition; CKSyncEngine leaves this implicit.)
        case recordZoneChangesRestarted(zoneID: RecordZone.ID)
        /// One zone was fetched; `zoneNotFound` here means the zone is gone and its token was dropped.
        case didFetchRecordZoneChanges(zoneID: RecordZone.ID, error: TandemError?)
        case willSendChanges(SendChangesContext)
        case didSendChanges(SendChangesContext)
    }

    /// `CKSyncEngine.Event.FetchedDatabaseChanges`.
    public struct FetchedDatabaseChanges: Sendable {
        /// Why a zone left the database (`CKSyncEngine.ZoneDeletionReason`).
        public enum DeletionReason: Sendable, Hashable {
            /// The zone was deleted: delete local data of the zone.
            case deleted
            /// The zone's data was purged: delete local data and do not upload it again.
            case purged
            /// The user lost access to a shared zone (left the share or was removed, decisions S2).
            case accessLost
            /// A reason this SDK does not know, as the server spelled it.
            case other(String)

            init(server: String) {
                switch server {
                case "DELETED": self = .deleted
                case "PURGED": self = .purged
                case "ACCESS_LOST": self = .accessLost
                default: self = .other(server)
                }
            }
        }

        public struct Deletion: Sendable, Hashable {
            public var zoneID: RecordZone.ID
            public var reason: DeletionReason
        }

        /// Zones with changes; the engine fetches them next.
        public var modifications: [RecordZone.ID]
        public var deletions: [Deletion]
    }

    /// `CKSyncEngine.Event.FetchedRecordZoneChanges`.
    public struct FetchedRecordZoneChanges: Sendable {
        public struct Deletion: Sendable, Hashable {
            public var recordID: Record.ID
            public var recordType: String
        }

        /// Records created or changed, as the server holds them now (keep them: their change tags
        /// make the next `.ifServerRecordUnchanged` save succeed).
        public var modifications: [Record]
        public var deletions: [Deletion]
    }

    /// `CKSyncEngine.Event.SentDatabaseChanges`.
    public struct SentDatabaseChanges: Sendable {
        public struct FailedZoneSave: Sendable {
            public var zone: RecordZone
            public var error: TandemError
        }

        public var savedZones: [RecordZone]
        public var failedZoneSaves: [FailedZoneSave]
        public var deletedZoneIDs: [RecordZone.ID]
        public var failedZoneDeletes: [RecordZone.ID: TandemError]
    }

    /// `CKSyncEngine.Event.SentRecordZoneChanges`.
    public struct SentRecordZoneChanges: Sendable {
        public struct FailedRecordSave: Sendable {
            /// The record as the app sent it.
            public var record: Record
            /// `serverRecordChanged` carries `serverRecord`: merge into it and queue the save again.
            public var error: TandemError
        }

        /// The records as the server now holds them (new change tags).
        public var savedRecords: [Record]
        public var failedRecordSaves: [FailedRecordSave]
        public var deletedRecordIDs: [Record.ID]
        public var failedRecordDeletes: [Record.ID: TandemError]
    }
}
