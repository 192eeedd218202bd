internal import TandemCore
internal import TandemSQLite

/// The records `LocalStore.share(_:to:depth:)` moves: the listed ones and the records related to
/// them, found in the file in one read, and their copies for the share's zone (decisions R34–R36).
///
/// Two records are related when one references the other: through a `REFERENCE` or
/// `REFERENCE_LIST` field, or as its `parent`. Both directions count, as a Core Data relationship
/// and its inverse do: a note's notebook follows the note, and the notebook's other notes follow
/// the notebook. Each step away from a listed record is one level of `depth`.
struct RelatedRecords {
    /// The rows to move, listed records first, then by level, a parent before its children;
    /// local edits applied.
    private(set) var rows: [LocalMirror.Row] = []
    /// The names of the records that move (their names stay in the share's zone).
    private(set) var names: Set<String> = []

    /// One zone of the file, as a graph.
    private struct ZoneGraph {
        var rows: [String: LocalMirror.Row]
        /// For each record name, the records of the zone that reference it (field or parent).
        var referrers: [String: [(name: String, action: TandemCore.Reference.Action)]] = [:]

        init(_ rows: [String: LocalMirror.Row]) {
            self.rows = rows
            for (name, row) in rows where row.record.recordType != Share.recordType {
                for target in RelatedRecords.references(of: row.record) where target.zoneName == nil || target.zoneName == row.record.recordID.zoneID.zoneName {
                    referrers[target.name, default: []].append((name, target.action))
                }
            }
        }
    }

    /// Finds what moves into `destination`.
    /// - Parameter depth: levels of relations followed (0: only `ids`; nil: all reachable).
    /// - Throws: `invalidArguments` for a negative depth, a shared-database record, a share
    ///   record, a reference naming another zone, or two moving records with one name;
    ///   `unknownItem` for a listed record the file does not hold; `alreadyShared` for a record
    ///   another share covers; `referenceViolation` for a record that stays and holds a
    ///   `VALIDATE` or `DELETE_SELF` reference to one that moves; `limitExceeded` above
    ///   `Limits.operationsPerRequest` records (one atomic `records/modify` carries them all).
    init(_ ids: [Record.ID], into destination: RecordZone.ID, depth: Int?, _ db: SQLiteConnection) throws {
        if let depth, depth < 0 { throw TandemError(.invalidArguments, "depth must be 0 or more (nil: every related record)") }
        var graphs: [RecordZone.ID: ZoneGraph] = [:]
        func graph(_ zoneID: RecordZone.ID) throws -> ZoneGraph {
            if let known = graphs[zoneID] { return known }
            let made = ZoneGraph(try LocalMirror.rows(db, inZone: zoneID))
            graphs[zoneID] = made
            return made
        }
        var seen = Set<Record.ID>()
        var level: [Record.ID] = []
        for id in ids where !seen.contains(id) && id.zoneID != destination {
            guard LocalMirror.scope(of: id) == .private else {
                throw TandemError(.invalidArguments, "\(id) is in the shared database: only the owner shares records")
            }
            guard try graph(id.zoneID).rows[id.recordName] != nil else { throw TandemError(.unknownItem, "the local store has no record \(id)") }
            seen.insert(id)
            level.append(id)
        }
        var distance = 0
        while !level.isEmpty {
            var next: [Record.ID] = []
            for id in level {
                let zone = try graph(id.zoneID)
                guard let row = zone.rows[id.recordName] else { continue }
                try add(row, destination: destination, db)
                guard depth.map({ distance < $0 }) ?? true else { continue }
                let related = Self.references(of: row.record).map(\.name) + (zone.referrers[id.recordName] ?? []).map(\.name)
                for name in related {
                    let other = Record.ID(recordName: name, zoneID: id.zoneID)
                    // A record the file does not hold is not followed: the reference keeps its name.
                    guard !seen.contains(other), zone.rows[name] != nil else { continue }
                    seen.insert(other)
                    next.append(other)
                }
            }
            level = next
            distance += 1
        }
        // A record that stays keeps its references to the originals, which are deleted: the
        // server would refuse that deletion (VALIDATE) or delete the record with it (DELETE_SELF).
        for (zoneID, zone) in graphs {
            for row in rows where row.record.recordID.zoneID == zoneID {
                for referrer in zone.referrers[row.record.recordID.recordName] ?? [] where referrer.action != .none
                    && !seen.contains(Record.ID(recordName: referrer.name, zoneID: zoneID)) {
                    throw TandemError(.referenceViolation, "record '\(referrer.name)' holds a \(referrer.action.rawValue) reference to '\(row.record.recordID.recordName)' "
                        + "and would stay behind when it moves: share with a larger depth (nil: every related record) or list it too")
                }
            }
        }
        rows = Self.parentsFirst(rows)
        if rows.count >= Limits.operationsPerRequest {
            throw TandemError(.limitExceeded, "sharing would move \(rows.count) records; one share moves at most \(Limits.operationsPerRequest - 1) "
                + "(one atomic request with the share): pass a smaller depth")
        }
    }

    private mutating func add(_ row: LocalMirror.Row, destination: RecordZone.ID, _ db: SQLiteConnection) throws {
        let id = row.record.recordID
        guard row.record.recordType != Share.recordType else {
            throw TandemError(.invalidArguments, "\(id) is a share record: share the records it covers")
        }
        if let share = try LocalStore.share(covering: id, db) {
            throw TandemError(.alreadyShared, "record '\(id.recordName)' is in share '\(share.recordID.recordName)' already: a record is in one share at a time "
                + "(stop that share, or pass a smaller depth)")
        }
        for case (let key, let value) in row.record.fields {
            for case .reference(let reference) in value.elements {
                if let zone = reference.zoneID, zone.zoneName != id.zoneID.zoneName {
                    throw TandemError(.invalidArguments, "field '\(key)' of record '\(id.recordName)' references a record in zone '\(zone.zoneName)': "
                        + "a reference stays in its record's zone (CloudKit's rule, which the server enforces)")
                }
            }
        }
        guard names.insert(id.recordName).inserted, try LocalMirror.row(db, Record.ID(recordName: id.recordName, zoneID: destination)) == nil else {
            throw TandemError(.invalidArguments, "two records named '\(id.recordName)' would meet in the share's zone: record names are unique in a zone")
        }
        rows.append(row)
    }

    /// `rows` in the same order except that a moving parent comes before its children: the
    /// server checks that a parent exists when a record naming it is saved, in request order.
    private static func parentsFirst(_ rows: [LocalMirror.Row]) -> [LocalMirror.Row] {
        let byName = Dictionary(rows.map { ($0.record.recordID.recordName, $0) }, uniquingKeysWith: { first, _ in first })
        var ordered: [LocalMirror.Row] = []
        var placed = Set<String>()
        func place(_ row: LocalMirror.Row) {
            guard placed.insert(row.record.recordID.recordName).inserted else { return }
            if let parent = row.record.parent.flatMap({ byName[$0.recordID.recordName] }) { place(parent) }
            ordered.append(row)
        }
        for row in rows { place(row) }
        return ordered
    }

    /// The records `record` references in its fields and as its parent: names, the zone a
    /// field's reference names (nil: the record's own), and the action.
    static func references(of record: Record) -> [(name: String, zoneName: String?, action: TandemCore.Reference.Action)] {
        var found: [(name: String, zoneName: String?, action: TandemCore.Reference.Action)] = []
        for value in record.fields.values {
            for case .reference(let reference) in value.elements {
                found.append((reference.recordName, reference.zoneID?.zoneName, reference.action))
            }
        }
        if let parent = record.parent { found.append((parent.recordID.recordName, nil, .none)) }
        return found
    }

    /// The copy of `original` saved in `zoneID`: fields (local edits applied, every key marked
    /// changed), references rewritten to name the same records there, and the parent kept when
    /// it moves too (a parent must exist in the zone: the server checks it when set).
    func copy(of original: Record, into zoneID: RecordZone.ID) -> Record {
        var copy = Record(recordType: original.recordType, recordID: Record.ID(recordName: original.recordID.recordName, zoneID: zoneID))
        copy.fields = original.fields.mapValues { Self.rewritten($0, into: zoneID.wire) }
        copy.pendingAssets = original.pendingAssets
        copy.changed = Set(original.fields.keys)
        if let parent = original.parent, names.contains(parent.recordID.recordName) {
            copy.parent = Reference(recordID: Record.ID(recordName: parent.recordID.recordName, zoneID: zoneID))
        }
        return copy
    }

    /// `value` with each reference naming `zone` (record names kept).
    static func rewritten(_ value: FieldValue, into zone: ZoneID) -> FieldValue {
        switch value {
        case .reference(var reference):
            reference.zoneID = zone
            return .reference(reference)
        case .list(let items, let type) where type == .reference:
            return .list(items.map { rewritten($0, into: zone) }, of: type)
        default:
            return value
        }
    }
}
