import Foundation
public import TandemCore
public import TandemStore

/// Who is asking, and which database they address.
public struct RequestScope: Sendable {
    public var database: DatabaseScope
    /// The caller's user record name.
    public var user: String
    public var deviceID: String
    /// The server's base URL as the client reaches it (share URLs in answers).
    public var baseURL: String
    /// The base URL for links emailed to other people (share invitations): the trusted one of
    /// `RequestContext.mailLinkBaseURL`, never a forged Host; nil mails no such link (A38, A45).
    public var mailBaseURL: String?
    /// Signs the pictures of people shown to the caller (share participants; decisions R32).
    var avatarSigner: AssetURLSigner?

    public init(database: DatabaseScope, user: String, deviceID: String = "", baseURL: String = "", mailBaseURL: String? = nil) {
        self.database = database
        self.user = user
        self.deviceID = deviceID
        self.baseURL = baseURL
        self.mailBaseURL = mailBaseURL
    }
}

/// Records in a database: save, fetch, delete and query (CloudKit Web Services: records/modify,
/// records/lookup, records/query), in the caller's private database or, through the shared
/// database, in zones of other owners where the caller accepted a share. Pure service: takes
/// decoded values, returns values or `CloudKitError`s; routes do the JSON.
public struct RecordService: Sendable {
    public let store: any Store
    /// Most participants a share may have, the owner included (decisions D8).
    public let participantLimit: Int
    /// Where committed changes go for notifications (nil: nowhere).
    var hub: ChangeHub?
    /// Where Shared with You effects of share changes go (membership notices).
    var conversationHub: ConversationHub?
    /// Emails people added to shares (A30; nil: nobody).
    var invitations: ShareInvitations?

    public init(store: any Store, participantLimit: Int = Limits.participantsPerShare) {
        self.store = store
        self.participantLimit = participantLimit
    }

    /// The outcome of one operation: the saved record (nil for a deletion) or an error.
    public enum ItemResult: Sendable {
        case saved(Record)
        case deleted(recordName: String)
        case failed(CloudKitError)
    }

    /// Resolves the addressed zone of the private database. The default zone always exists; a
    /// custom zone that does not gives `ZONE_NOT_FOUND`.
    static func zone(_ reader: any StoreReading, _ scope: RequestScope, _ zoneID: ZoneID) throws -> StoredZone? {
        if let owner = zoneID.ownerRecordName, owner != scope.database.owner {
            throw CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' of another user is not in your private database; use the shared database", zoneID: zoneID)
        }
        if let zone = try reader.zone(scope.database, name: zoneID.zoneName) { return zone }
        if zoneID.isDefaultZone { return nil }
        throw CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: zoneID)
    }

    /// Resolves the addressed zone and the caller's access to it, and the scope writes run in
    /// (always the owner's private database). In the shared database a zone is the owner's zone
    /// named by `zoneName` + `ownerRecordName`, visible only once the caller accepted a share in it.
    static func resolve(_ reader: any StoreReading, _ scope: RequestScope, _ zoneID: ZoneID) throws -> (ZoneAccess, RequestScope)? {
        if scope.database.database == .public { return try PublicDatabase.resolve(reader, scope, zoneID) }
        guard scope.database.database == .shared else {
            guard let zone = try zone(reader, scope, zoneID) else { return nil }
            return (try ZoneAccess.load(reader, zone: zone, user: scope.user), scope)
        }
        let missing = CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' is not in your shared database", zoneID: zoneID)
        guard let owner = zoneID.ownerRecordName else {
            throw CloudKitError(.zoneNotFound, "in the shared database, address a zone by zoneName and ownerRecordName (the owner's user record name)", zoneID: zoneID)
        }
        guard owner != scope.user else {
            throw CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' is yours; use your private database", zoneID: zoneID)
        }
        var ownerScope = scope
        ownerScope.database = DatabaseScope(container: scope.database.container, environment: scope.database.environment,
                                            database: .private, owner: owner)
        guard let zone = try reader.zone(ownerScope.database, name: zoneID.zoneName) else { throw missing }
        let access = try ZoneAccess.load(reader, zone: zone, user: scope.user)
        guard access.hasAcceptedShare else { throw missing }
        return (access, ownerScope)
    }

    // MARK: records/modify

    /// Applies `operations` in one transaction; share records last, so a new share finds its
    /// root saved (results keep the request's order).
    ///
    /// - `atomic` (custom zones only, as in CloudKit): if any operation fails nothing is written;
    ///   the failing items carry their own error and the rest `ATOMIC_ERROR`.
    /// - Otherwise each operation stands alone: a failure rolls back only that operation.
    /// - Throws: `ZONE_NOT_FOUND` for a missing custom zone or one not shared with the caller;
    ///   `BAD_REQUEST` when a record appears twice; `LIMIT_EXCEEDED` for more than 200 operations.
    public func modify(_ operations: [RecordOperation], zoneID: ZoneID, atomic: Bool, scope: RequestScope) throws -> [ItemResult] {
        guard operations.count <= Limits.operationsPerRequest else {
            throw CloudKitError(.limitExceeded, "at most \(Limits.operationsPerRequest) operations per request; got \(operations.count)")
        }
        var seen = Set<String>()
        for op in operations where !seen.insert(op.recordName).inserted {
            throw CloudKitError.badRequest("record '\(op.recordName)' appears in more than one operation")
        }
        let isAtomic = atomic && !zoneID.isDefaultZone
        let now = Clock.milliseconds()
        let limit = participantLimit
        let isShare = { (op: RecordOperation) in op.recordType == Share.recordType || op.forRecord != nil }
        let order = operations.indices.filter { !isShare(operations[$0]) } + operations.indices.filter { isShare(operations[$0]) }
        let batch = ModifyBatch(savedNames: Set(operations.filter { !$0.kind.isDelete }.map(\.recordName)), baseURL: scope.baseURL,
                                participantLimit: limit)
        batch.signer = scope.avatarSigner
        nonisolated(unsafe) let unsafeBatch = batch
        let hub = self.hub
        let conversationHub = self.conversationHub
        let invitations = self.invitations
        do {
            return try store.write({ tx -> ModifyOutcome in
                let batch = unsafeBatch
                let (access, ownerScope): (ZoneAccess, RequestScope)
                // One record of the caller's own zone: the zone, the record, the schema's etag and
                // (PostgreSQL) the change sequence and the record's row key in one statement, which
                // the operation then starts from (decisions P73–P76).
                var prefetched: ModifyContext.Prefetched?
                var resolved: (ZoneAccess, RequestScope)?
                if Self.isOwnSingle(operations.map(\.recordName), zoneID, scope),
                   let (zone, found, etag, before) = try tx.zoneRecordAndSchemaETagReservingSequence(scope.database, zoneName: zoneID.zoneName,
                                                                                                    recordName: operations[0].recordName) {
                    prefetched = ModifyContext.Prefetched(recordName: operations[0].recordName, found: found, schemaETag: etag, before: before)
                    resolved = (try ZoneAccess.load(tx, zone: zone, user: scope.user), scope)
                } else {
                    resolved = try Self.resolve(tx, scope, zoneID)
                }
                if let resolved {
                    (access, ownerScope) = resolved
                } else {
                    // The default zone is created by its first write.
                    let zone = try tx.ensureZone(scope.database, name: zoneID.zoneName, at: now)
                    (access, ownerScope) = try Self.resolve(tx, scope, zoneID) ?? (try ZoneAccess.load(tx, zone: zone, user: scope.user), scope)
                }
                let context = ModifyContext(tx: tx, zone: access.zone, scope: ownerScope, access: access, batch: batch, now: now,
                                            prefetched: prefetched)
                var results = [ItemResult](repeating: .deleted(recordName: ""), count: operations.count)
                var failed = false
                for index in order {
                    let op = operations[index]
                    let noted = batch.changes.count
                    let invited = batch.invitations.count
                    do {
                        // A lone operation needs no savepoint of its own: when it fails, the whole
                        // write is rolled back below (P75).
                        results[index] = try operations.count == 1 ? context.apply(op) : tx.savepoint { try context.apply(op) }
                        if case .saved = results[index] { batch.succeededNames.insert(op.recordName) }
                    } catch let error as CloudKitError {
                        var error = error
                        error.recordName = op.recordName
                        results[index] = .failed(error)
                        failed = true
                        batch.changes.removeSubrange(noted...)  // rolled back: nothing to tell
                        batch.invitations.removeSubrange(invited...)
                    }
                }
                if failed && operations.count == 1 {
                    // Nothing of the request is kept; its one result is the operation's error.
                    throw AtomicFailure(results: results)
                }
                if isAtomic && failed {
                    throw AtomicFailure(results: results.enumerated().map { index, result in
                        if case .failed = result { return result }
                        return .failed(CloudKitError(.atomicError, "the atomic batch failed because another operation failed",
                                                     recordName: operations[index].recordName))
                    })
                }
                var event: ChangeEvent?
                if results.contains(where: { if case .failed = $0 { false } else { true } }) {
                    let lost = try tx.zoneActivity(access.zone, container: scope.database.container, environment: scope.database.environment,
                                                   viewersChanged: batch.sharingChanged, at: now)
                    event = ChangeEvent(logged: tx, zone: access.zone, container: scope.database.container, environment: scope.database.environment,
                                        deviceID: scope.deviceID, described: batch.changes, formerViewers: lost)
                }
                // A Tandem share sent in conversations tells them who joined or left (issue 8).
                var notices = batch.participantChanges.isEmpty ? nil
                    : try ShareMembershipNotices.post(tx, batch.participantChanges, actor: scope.user, container: scope.database.container,
                                                      environment: scope.database.environment, at: now)
                // A renamed share renames its collaboration highlight (R4).
                if !batch.metadataChanges.isEmpty {
                    let refreshed = try ShareMetadataRefresh.apply(tx, batch.metadataChanges, actor: scope.user, container: scope.database.container,
                                                                   environment: scope.database.environment, at: now)
                    notices = notices.map { $0.merged(with: refreshed) } ?? refreshed
                }
                // A stopped share's highlight leaves its viewers' lists at once (W17); so does a
                // share's where its people changed, and it reaches those it reaches now (W19).
                for guid in batch.reshapedShares {
                    batch.shareHighlightViewers.formUnion(try ShareReach.viewers(tx, shortGUID: guid, container: scope.database.container,
                                                                                 environment: scope.database.environment))
                }
                if !batch.shareHighlightViewers.isEmpty {
                    let refreshed = ShareReach.effects(batch.shareHighlightViewers, container: scope.database.container,
                                                       environment: scope.database.environment)
                    notices = notices.map { $0.merged(with: refreshed) } ?? refreshed
                }
                let mails = batch.invitations.isEmpty ? []
                    : try invitations?.compose(tx, batch.invitations, inviter: scope.user, baseURL: scope.mailBaseURL) ?? []
                return ModifyOutcome(results: try Self.finish(results, tx, access: access, batch: batch), event: event, notices: notices,
                                     mails: mails)
            }, afterCommit: { outcome in
                if let event = outcome.event { hub?.publish(event) }
                if let notices = outcome.notices { conversationHub?.publish(notices) }
                if !outcome.mails.isEmpty { invitations?.send(outcome.mails) }
            }).results
        } catch let failure as AtomicFailure {
            return failure.results
        }
    }

    /// Re-reads records a later operation changed, and fills in share state for the viewer.
    private static func finish(_ results: [ItemResult], _ tx: any StoreReading, access: ZoneAccess, batch: ModifyBatch) throws -> [ItemResult] {
        let presenter = batch.presenter(tx)
        return try results.map { result in
            guard case .saved(var record) = result else { return result }
            if batch.rewritten.contains(record.recordName), let fresh = try tx.record(zone: access.zone, name: record.recordName) {
                record = fresh
            }
            if record.recordType == Share.recordType, let share = try tx.share(zone: access.zone, recordName: record.recordName) {
                record.sharing = try presenter.present(share, viewer: access.user)
            }
            return .saved(record)
        }
    }

    struct ModifyOutcome: @unchecked Sendable {
        var results: [ItemResult]
        var event: ChangeEvent?
        var notices: ConversationHub.Effects?
        var mails: [AccountMail] = []
    }

    /// Rolls back a request whose atomic batch, or whose only operation, failed; its results
    /// are the response.
    struct AtomicFailure: Error, @unchecked Sendable {
        var results: [ItemResult]
    }

    // MARK: records/lookup

    /// Fetches records by name; a missing one, or one the caller may not see, is a per-item `NOT_FOUND`.
    ///
    /// Without `decodeFields`, a record of the caller's own zone whose fields hold no asset
    /// carries only their stored text (`Record.encodedFields`), as `query`'s (decisions E25).
    public func lookup(_ names: [String], zoneID: ZoneID, scope: RequestScope, decodeFields: Bool = true) throws -> [ItemResult] {
        // One record of the caller's own zone is one statement (P63), run without a transaction (P72).
        if Self.isOwnSingle(names, zoneID, scope),
           let own = try store.readSingleStatement({ try Self.lookupOwn($0, names, zoneID, scope, decodeFields: decodeFields) }) {
            return own
        }
        return try store.read { reader in
            if let own = try Self.lookupOwn(reader, names, zoneID, scope) { return own }
            guard let (access, _) = try Self.resolve(reader, scope, zoneID) else {
                return names.map { .failed(CloudKitError(.notFound, "record '\($0)' does not exist", recordName: $0)) }
            }
            var records: [Record] = []
            var results: [ItemResult] = []
            for name in names {
                if let found = try reader.recordWithMembership(zone: access.zone, name: name),
                   access.isOwner || access.decide(.read, membership: found.membership).isAllowed {
                    records.append(found.record)
                    results.append(.saved(found.record))
                } else {
                    results.append(.failed(CloudKitError(.notFound, "record '\(name)' does not exist", recordName: name)))
                }
            }
            if scope.database.database == .public { results = try PublicGrants.readable(results, reader, scope: scope) }
            if records.contains(where: { $0.recordType == Share.recordType }) {
                let presenter = SharePresenter(reader: reader, baseURL: scope.baseURL, signer: scope.avatarSigner)
                results = try results.map { result in
                    guard case .saved(let record) = result else { return result }
                    return .saved(try Self.presenting(record, access, presenter, viewer: scope.user))
                }
            }
            return results
        }
    }

    /// records/lookup of one record in the caller's own private database: the zone and the
    /// record read by one statement (`zoneAndRecord`, decisions P63), so on PostgreSQL the
    /// lookup is one round trip. The owner reads every record of their zones, so no share is
    /// read unless the record is a share. Nil for every other lookup, and when the zone does not
    /// exist (the general path then answers `NOT_FOUND` or `ZONE_NOT_FOUND`).
    static func lookupOwn(_ reader: any StoreReading, _ names: [String], _ zoneID: ZoneID, _ scope: RequestScope,
                          decodeFields: Bool = true) throws -> [ItemResult]? {
        guard isOwnSingle(names, zoneID, scope),
              let (zone, found) = try reader.zoneAndRecord(scope.database, zoneName: zoneID.zoneName, recordName: names[0],
                                                           decodeFields: decodeFields) else { return nil }
        guard let record = found?.record else {
            return [.failed(CloudKitError(.notFound, "record '\(names[0])' does not exist", recordName: names[0]))]
        }
        guard record.recordType == Share.recordType else { return [.saved(record)] }
        let access = try ZoneAccess.load(reader, zone: zone, user: scope.user)
        let presenter = SharePresenter(reader: reader, baseURL: scope.baseURL, signer: scope.avatarSigner)
        return [.saved(try presenting(record, access, presenter, viewer: scope.user))]
    }

    /// Whether a lookup is of one record in the caller's own private database (``lookupOwn``).
    static func isOwnSingle(_ names: [String], _ zoneID: ZoneID, _ scope: RequestScope) -> Bool {
        names.count == 1 && scope.database.database == .private && scope.database.owner == scope.user
            && (zoneID.ownerRecordName.map { $0 == scope.user } ?? true)
    }

    /// A share record with its `sharing` (participants, URL) as `viewer` may see it; any other
    /// record as it is.
    static func presenting(_ record: Record, _ access: ZoneAccess, _ presenter: SharePresenter, viewer: String) throws -> Record {
        guard record.recordType == Share.recordType, let share = access.shares[record.recordName] else { return record }
        var record = record
        record.sharing = try presenter.present(share, viewer: viewer)
        return record
    }

    // MARK: records/query

    /// Runs a query. `after` comes from the continuation marker; returns the page, the cursor
    /// after its last record, and whether more records follow. In the shared database a query addresses one zone and sees only
    /// the records of shares the caller accepted.
    ///
    /// Without `decodeFields`, records whose fields hold no asset carry only their stored text
    /// (`Record.encodedFields`): for a response written without `desiredKeys` or
    /// `numbersAsStrings`, which copies that text as is (decisions E25).
    public func query(_ query: Query, zoneID: ZoneID?, zoneWide: Bool, limit: Int, after: QueryCursor?,
                      scope: RequestScope, decodeFields: Bool = true) throws -> (records: [Record], cursor: QueryCursor?, more: Bool) {
        try store.read { reader in
            var zones: [StoredZone]
            var memberships: [String]?
            var access: ZoneAccess?
            if scope.database.database == .shared {
                guard let zoneID else {
                    throw CloudKitError.badRequest("in the shared database, query one zone at a time: give zoneID with ownerRecordName")
                }
                let resolved = try Self.resolve(reader, scope, zoneID)
                access = resolved?.0
                zones = resolved.map { [$0.0.zone] } ?? []
                memberships = resolved?.0.readableMemberships
            } else if zoneWide && zoneID == nil {
                zones = try reader.zones(scope.database)
            } else {
                zones = try Self.zone(reader, scope, zoneID ?? .defaultZone).map { [$0] } ?? []
            }
            let allowed = try SchemaGate.query(query, reader, scope: scope)
            let page = try reader.query(allowed, zones: zones, limit: limit + 1, after: after, memberships: memberships,
                                        decodeFields: decodeFields)
            var records = page.prefix(limit).map(\.record)
            if query.recordType == Share.recordType {
                let presenter = SharePresenter(reader: reader, baseURL: scope.baseURL, signer: scope.avatarSigner)
                for index in records.indices {
                    let zone = zones.first { $0.zoneID == records[index].zoneID } ?? zones[0]
                    let shares = try access?.shares ?? Dictionary(reader.shares(zone: zone).map { ($0.recordName, $0) }, uniquingKeysWith: { a, _ in a })
                    if let share = shares[records[index].recordName] {
                        records[index].sharing = try presenter.present(share, viewer: scope.user)
                    }
                }
            }
            return (records, page.prefix(limit).last?.cursor, page.count > limit)
        }
    }
}
