import Foundation
public import TandemCore
public import TandemStore

/// Who is asking, and which database they address.
public struct RequestScope: Sendable {
    public var database: DatabaseScope
    /// The caller's user record name.
    public var user: String
    public var deviceID: String

    public init(database: DatabaseScope, user: String, deviceID: String = "") {
        self.database = database
        self.user = user
        self.deviceID = deviceID
    }
}

/// Records in a database: save, fetch, delete and query (CloudKit Web Services: records/modify,
/// records/lookup, records/query). Pure service: takes decoded values, returns values or
/// `CloudKitError`s; routes do the JSON.
public struct RecordService: Sendable {
    public let store: any Store

    public init(store: any Store) { self.store = store }

    /// The outcome of one operation: the saved record (nil for a deletion) or an error.
    public enum ItemResult: Sendable {
        case saved(Record)
        case deleted(recordName: String)
        case failed(CloudKitError)
    }

    /// Resolves the addressed zone. The default zone always exists; a custom zone that does not
    /// gives `ZONE_NOT_FOUND`.
    static func zone(_ reader: any StoreReading, _ scope: RequestScope, _ zoneID: ZoneID) throws -> StoredZone? {
        if let owner = zoneID.ownerRecordName, owner != scope.database.owner {
            throw CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' of another user is not in your private database", zoneID: zoneID)
        }
        if let zone = try reader.zone(scope.database, name: zoneID.zoneName) { return zone }
        if zoneID.isDefaultZone { return nil }
        throw CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: zoneID)
    }

    // MARK: records/modify

    /// Applies `operations` in order in one transaction.
    ///
    /// - `atomic` (custom zones only, as in CloudKit): if any operation fails nothing is written;
    ///   the failing items carry their own error and the rest `ATOMIC_ERROR`.
    /// - Otherwise each operation stands alone: a failure rolls back only that operation.
    /// - Throws: `ZONE_NOT_FOUND` for a missing custom zone or another user's zone; `BAD_REQUEST`
    ///   when a record appears twice; `LIMIT_EXCEEDED` for more than 200 operations.
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
        do {
            return try store.write { tx in
                // The default zone is created by its first write.
                let zone = try Self.zone(tx, scope, zoneID) ?? tx.ensureZone(scope.database, name: zoneID.zoneName, at: now)
                let context = ModifyContext(tx: tx, zone: zone, scope: scope, now: now)
                var results: [ItemResult] = []
                for op in operations {
                    do {
                        let result = try tx.savepoint { try context.apply(op) }
                        results.append(result)
                    } catch let error as CloudKitError {
                        var error = error
                        error.recordName = op.recordName
                        results.append(.failed(error))
                    }
                }
                if isAtomic, results.contains(where: { if case .failed = $0 { true } else { false } }) {
                    throw AtomicFailure(results: results.enumerated().map { index, result in
                        if case .failed = result { return result }
                        return .failed(CloudKitError(.atomicError, "the atomic batch failed because another operation failed",
                                                     recordName: operations[index].recordName))
                    })
                }
                return results
            }
        } catch let failure as AtomicFailure {
            return failure.results
        }
    }

    struct AtomicFailure: Error, @unchecked Sendable {
        var results: [ItemResult]
    }

    // MARK: records/lookup

    /// Fetches records by name; a missing one is a per-item `NOT_FOUND`.
    public func lookup(_ names: [String], zoneID: ZoneID, scope: RequestScope) throws -> [ItemResult] {
        try store.read { reader in
            let zone = try Self.zone(reader, scope, zoneID)
            return try names.map { name in
                if let zone, let record = try reader.record(zone: zone, name: name) { return .saved(record) }
                return .failed(CloudKitError(.notFound, "record '\(name)' does not exist", recordName: name))
            }
        }
    }

    // MARK: records/query

    /// Runs a query. `offset` comes from the continuation marker; returns the page and whether
    /// more records follow.
    public func query(_ query: Query, zoneID: ZoneID?, zoneWide: Bool, limit: Int, offset: Int,
                      scope: RequestScope) throws -> (records: [Record], more: Bool) {
        try store.read { reader in
            var zones: [StoredZone]
            if zoneWide && zoneID == nil {
                zones = try reader.zones(scope.database)
            } else {
                zones = try Self.zone(reader, scope, zoneID ?? .defaultZone).map { [$0] } ?? []
            }
            let page = try reader.query(query, zones: zones, limit: limit + 1, offset: offset)
            return (Array(page.prefix(limit)), page.count > limit)
        }
    }
}
