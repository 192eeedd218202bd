import TandemCore
import TandemStore

/// Applies `records/modify` operations inside one store transaction: version checks, field
/// merging, reference rules, change tags, share membership and access (CloudKit Web Services:
/// records/modify; Tandem decisions D2 for conflicts; sharing rules in ModifyContext+Shares).
///
/// `scope.database` is the zone owner's private database; `scope.user` is the caller, who is
/// the owner or (through the shared database) a participant, as `access` says.
struct ModifyContext {
    let tx: any StoreWriting
    let zone: StoredZone
    let scope: RequestScope
    let access: ZoneAccess
    let batch: ModifyBatch
    let now: Int64
    /// The record of a request's only operation, read with its zone before any write (only
    /// `RecordService.modify` applies operations, each once).
    var prefetched: Prefetched? = nil

    /// A record (or its absence) read in this transaction before anything was written, with
    /// the etag of the environment's schema then (nil: no schema yet).
    struct Prefetched {
        let recordName: String
        let found: (record: Record, membership: String?)?
        let schemaETag: String?
        /// The record's row as read (PostgreSQL), for its save not to wait (P76).
        let before: RowBefore?
    }

    /// The schema etag read with `op`'s record, when it was prefetched: still current when its
    /// save is admitted, since the operation writes nothing before that.
    private func knownSchemaETag(_ op: RecordOperation) -> String?? {
        guard let prefetched, prefetched.recordName == op.recordName else { return .none }
        return .some(prefetched.schemaETag)
    }

    /// The row `op`'s record had when it was prefetched: only for a plain record's save (a
    /// share's saves go through share code that writes its root first).
    private func prefetchedRow(_ op: RecordOperation, _ rule: MembershipRule) -> RowBefore? {
        guard case .derived = rule, let prefetched, prefetched.recordName == op.recordName else { return nil }
        return prefetched.before
    }

    func apply(_ op: RecordOperation) throws -> RecordService.ItemResult {
        if let named = op.recordZoneID, !isThisZone(named) {
            throw CloudKitError.badRequest("the record names zone '\(named.zoneName)' but the request addresses zone '\(zone.zoneID.zoneName)'; send one request per zone")
        }
        if let named = op.forRecordZoneID, !isThisZone(named) {
            throw CloudKitError.badRequest("forRecord must be in the share's own zone ('\(zone.zoneID.zoneName)')")
        }
        if let named = op.parentZoneID, !isThisZone(named) {
            throw CloudKitError.badRequest("a parent must be in the record's own zone ('\(zone.zoneID.zoneName)')")
        }
        let found: (record: Record, membership: String?)?
        if let prefetched, prefetched.recordName == op.recordName {
            found = prefetched.found
        } else {
            found = try tx.recordWithMembership(zone: zone, name: op.recordName)
        }
        // A record the caller may not see does not exist for them (and its name is not theirs to take).
        if let found, !access.decide(.read, membership: found.membership).isAllowed {
            if op.kind == .create { throw CloudKitError(.accessDenied, "you cannot create a record named '\(op.recordName)' in this zone") }
            throw CloudKitError(.notFound, "record '\(op.recordName)' does not exist")
        }
        let existing = found?.record
        let membership = found?.membership
        if scope.database.database == .public { try PublicGrants.authorize(op, existing: existing, tx: tx, scope: scope) }
        if existing == nil && (op.kind.checksTag || op.kind == .forceDelete) {
            throw CloudKitError(.notFound, "record '\(op.recordName)' does not exist")
        }
        if (existing?.recordType ?? op.recordType) == Share.recordType {
            return try applyToShare(op, existing: existing)
        }
        if let existing, op.kind.checksTag, existing.recordChangeTag != op.recordChangeTag {
            throw try conflict(op, existing)
        }
        switch op.kind {
        case .delete, .forceDelete:
            guard let existing else { throw CloudKitError(.notFound, "record '\(op.recordName)' does not exist") }
            let isRoot = existing.share.map { access.shares[$0] != nil } ?? false
            try access.decide(AccessPolicy.action(for: isRoot ? .root : .record, deleting: true), membership: membership).enforce()
            if isRoot, let name = existing.share, let share = access.shares[name] {
                // The share goes with its root: participants lose access and the share record is deleted.
                try stopSharing(share)
                let sequence = try tx.nextChangeSequence(zone)
                try tx.deleteRecord(name: share.recordName, recordType: Share.recordType, zone: zone, sequence: sequence)
            }
            var deleting = Set<String>()
            try delete(existing, membership: membership, deleting: &deleting)
            return .deleted(recordName: op.recordName)
        case .create:
            if let existing {
                var error = CloudKitError(.exists, "record '\(op.recordName)' already exists; use update with its recordChangeTag")
                error.serverRecord = try readableServerRecord(existing)
                throw error
            }
            return .saved(try save(op, over: nil, membership: nil))
        case .update, .replace, .forceUpdate, .forceReplace:
            if existing != nil { try access.decide(AccessPolicy.action(for: .record, deleting: false), membership: membership).enforce() }
            return .saved(try save(op, over: existing, membership: membership))
        }
    }

    /// A `CONFLICT` carrying the server's record (D2), as the caller may see it.
    func conflict(_ op: RecordOperation, _ existing: Record) throws -> CloudKitError {
        var error = CloudKitError(.conflict, "recordChangeTag '\(op.recordChangeTag ?? "")' is stale; the server has '\(existing.recordChangeTag ?? "")'. Fetch the record and retry, or use a force operation")
        var server = existing
        if server.recordType == Share.recordType, let share = try tx.share(zone: zone, recordName: server.recordName) {
            server.sharing = try batch.presenter(tx).present(share, viewer: scope.user)
        }
        error.serverRecord = try readableServerRecord(server)
        return error
    }

    /// The server record a `CONFLICT` or `EXISTS` may carry (D2): only one the caller may read
    /// (in the public database, the schema's READ grant).
    func readableServerRecord(_ record: Record) throws -> Record? {
        guard scope.database.database == .public else { return record }
        guard case .saved(let visible) = try PublicGrants.readable([.saved(record)], tx, scope: scope).first else { return nil }
        return visible
    }

    /// How a save sets the record's share membership.
    enum MembershipRule {
        /// From the parent (or the record's own share, for a root); moving a record moves its subtree.
        case derived
        /// Exactly this (share records and roots, set by the sharing code).
        case fixed(String?)
    }

    /// Saves `op` over `existing` (whose stored membership is `membership`).
    func save(_ op: RecordOperation, over existing: Record?, membership: String?, rule: MembershipRule = .derived,
              share: String?? = .none) throws -> Record {
        guard let recordType = op.recordType ?? existing?.recordType else {
            throw CloudKitError.badRequest("record '\(op.recordName)' does not exist, so \(op.kind.rawValue) needs a recordType")
        }
        if let existing, existing.recordType != recordType {
            throw CloudKitError.badRequest("record '\(op.recordName)' is a \(existing.recordType), not a \(recordType); a record's type cannot change")
        }
        var fields = (op.kind.replacesFields || existing == nil) ? [:] : existing!.fields
        for (name, value) in op.fields {
            fields[name] = value
        }
        if recordType != Share.recordType, let name = fields.keys.first(where: Share.systemFields.contains) {
            throw CloudKitError.badRequest("field '\(name)' belongs on cloudkit.share records")
        }
        // CKShare.SystemFieldKey types: title and type are strings, the thumbnail is bytes.
        for (name, value) in fields where Share.systemFields.contains(name) {
            let fits: Bool = switch value {
            case .string: name != "cloudkit.thumbnailImageData"
            case .bytes: name == "cloudkit.thumbnailImageData"
            default: false
            }
            guard fits else {
                throw CloudKitError.badRequest("field '\(name)' must be \(name == "cloudkit.thumbnailImageData" ? "BYTES" : "a STRING")")
            }
        }
        fields = try resolveAssets(fields, previous: existing?.fields ?? [:])
        try checkReferenceTargetsVisible(op.fields, recordName: op.recordName)
        try checkReferences(fields, recordName: op.recordName)
        var parent = op.clearsParent ? nil : (op.parent ?? existing?.parent)
        if op.kind.replacesFields && op.parent == nil { parent = nil }
        var newMembership = membership
        switch rule {
        case .fixed(let fixed):
            newMembership = fixed
        case .derived:
            newMembership = try derivedMembership(op, existing: existing, membership: membership, parent: parent)
        }
        // Encoded once, for the size, the store and the response (decisions E27).
        let stored = StoredFields.encode(fields)
        let size = Self.encodedSize(stored: stored, fieldCount: fields.count)
        guard size <= Limits.recordBytes else {
            throw CloudKitError(.limitExceeded, "record '\(op.recordName)' is \(size) bytes; a record's fields may hold at most \(Limits.recordBytes) bytes (1 MiB, assets excluded)")
        }
        let sequence = try tx.nextChangeSequence(zone)
        let stamp = Record.Stamp(timestamp: now, userRecordName: scope.user, deviceID: scope.deviceID)
        var record = Record(recordName: op.recordName, recordType: recordType, recordChangeTag: ChangeTags.tag(zone: zone.key, sequence: sequence),
                            fields: fields, zoneID: zone.zoneID, created: existing?.created ?? stamp, modified: stamp,
                            parent: parent, share: share ?? existing?.share)
        record.encodedFields = EncodedFields(JSONFragment(trusted: stored))
        let schema = try SchemaAdmission.admit(record, tx: tx, scope: scope.database, now: now, schemaETag: knownSchemaETag(op))
        // The prefetched record's row is saved without a wait (P76): nothing of it was written since.
        try tx.putRecord(record, zone: zone, sequence: sequence, membership: newMembership,
                         indexing: schema?.indexing(of: recordType), before: prefetchedRow(op, rule))
        batch.changes.append(.init(recordName: record.recordName, recordType: recordType, event: existing == nil ? .create : .update,
                                   memberships: [membership, newMembership]))
        if existing != nil && newMembership != membership {
            // The record moved into, out of, or between shares: its subtree goes with it.
            try tx.setMembership(zone: zone, subtreeOf: op.recordName, to: newMembership)
        }
        return record
    }

    /// The membership a saved record gets: a share root keeps its own share; any other record
    /// takes its parent's (nil under a zone-wide share, which covers every record anyway).
    /// Checks the parent exists, that the move makes no cycle, that the caller may write where
    /// the record lands, and that no record ends up in two shares (`ALREADY_SHARED`).
    private func derivedMembership(_ op: RecordOperation, existing: Record?, membership: String?, parent: String?) throws -> String? {
        var parentMembership: String?
        if let parent, parent != existing?.parent || existing == nil {
            // A parent is checked when it is set; a record keeps a parent that was deleted since.
            guard let found = try tx.recordWithMembership(zone: zone, name: parent),
                  access.decide(.read, membership: found.membership).isAllowed else {
                throw CloudKitError(.validatingReferenceError, "parent record '\(parent)' does not exist in zone '\(zone.zoneID.zoneName)'")
            }
            guard found.record.recordType != Share.recordType else {
                throw CloudKitError.badRequest("a cloudkit.share record cannot be a parent; use the share's root record")
            }
            if existing != nil, try parent == op.recordName || tx.ancestors(zone: zone, of: parent, limit: 10_000).contains(op.recordName) {
                throw CloudKitError.badRequest("parent '\(parent)' is below record '\(op.recordName)'; a parent chain cannot loop")
            }
            parentMembership = found.membership
        } else if let parent {
            parentMembership = try tx.recordWithMembership(zone: zone, name: parent)?.membership
        }
        if let root = existing?.share, access.shares[root] != nil {
            // A root keeps its own share; under a record of another share it would be in two.
            if let parentMembership, parentMembership != root {
                throw CloudKitError(.alreadyShared, "record '\(op.recordName)' is the root of share '\(root)'; it cannot move under a record of share '\(parentMembership)'")
            }
            return root
        }
        let result = access.zoneShare != nil || parent == nil ? nil : parentMembership
        if existing == nil || result != membership {
            // The caller must be allowed to write where the record lands.
            if !access.isOwner && access.coveringShare(membership: result) == nil {
                throw CloudKitError(.accessDenied, "a record saved through the shared database needs a parent inside a share you can write to")
            }
            try access.decide(.write, membership: result).enforce()
        }
        if let existing, result != nil, result != membership {
            let subtree = try tx.subtree(zone: zone, of: existing.recordName)
            if let nested = subtree.shareRoots.first {
                throw CloudKitError(.alreadyShared, "record '\(nested)' below '\(existing.recordName)' is the root of its own share; a record can be in only one share")
            }
        }
        return result
    }

    /// A record's size as `Limits.recordBytes` counts it: each field's name and encoded value,
    /// without the stored object's punctuation (`{`, `}`, and per field two quotes, a colon and
    /// a comma but one). Field names never need escaping (`Names.isValidFieldName`, or a
    /// `cloudkit.` system field).
    static func encodedSize(stored: [UInt8], fieldCount: Int) -> Int {
        fieldCount == 0 ? 0 : stored.count - 4 * fieldCount - 1
    }

    /// True when `zoneID` names the zone being modified (an absent owner means the caller).
    private func isThisZone(_ zoneID: ZoneID) -> Bool {
        zoneID.zoneName == zone.zoneID.zoneName && (zoneID.ownerRecordName.map { $0 == scope.database.owner } ?? true)
    }

    /// References stay inside the zone (as in CloudKit); VALIDATE targets must exist; a
    /// DELETE_SELF target may have at most 750 such referrers.
    /// A participant's new VALIDATE and DELETE_SELF references must point at records they can
    /// see: otherwise they would learn what exists outside their shares, and pin it there.
    private func checkReferenceTargetsVisible(_ fields: [String: FieldValue?], recordName: String) throws {
        guard !access.isOwner else { return }
        for case (_, let value?) in fields {
            for case .reference(let reference) in value.elements where reference.action != .none && reference.recordName != recordName {
                let target = try tx.recordWithMembership(zone: zone, name: reference.recordName)
                guard let target, access.decide(.read, membership: target.membership).isAllowed else {
                    throw CloudKitError(.validatingReferenceError, "\(reference.action.rawValue) reference to '\(reference.recordName)', which does not exist")
                }
            }
        }
    }

    private func checkReferences(_ fields: [String: FieldValue], recordName: String) throws {
        for (name, value) in fields {
            for case .reference(let reference) in value.elements {
                if let target = reference.zoneID, !isThisZone(target) {
                    throw CloudKitError.badRequest("field '\(name)': a reference must point to a record in the same zone ('\(zone.zoneID.zoneName)')")
                }
                if reference.action == .validate && reference.recordName != recordName {
                    guard try tx.record(zone: zone, name: reference.recordName) != nil else {
                        throw CloudKitError(.validatingReferenceError, "VALIDATE reference to '\(reference.recordName)', which does not exist")
                    }
                }
                if reference.action == .deleteSelf {
                    let count = try tx.referrers(zone: zone, recordName: reference.recordName)
                        .filter { $0.action == .deleteSelf && $0.recordName != recordName }.count
                    guard count < Limits.deleteSelfReferencesPerTarget else {
                        throw CloudKitError(.limitExceeded, "record '\(reference.recordName)' already has \(count) DELETE_SELF references; the limit is \(Limits.deleteSelfReferencesPerTarget)")
                    }
                }
            }
        }
    }

    /// Deletes `record`, first deleting DELETE_SELF referrers (recursively) and refusing when a
    /// VALIDATE referrer would be left pointing at nothing. References never leave the zone.
    /// Records below it are no longer reachable from a share root, so they leave its share.
    func delete(_ record: Record, membership: String?, deleting: inout Set<String>) throws {
        batch.changes.append(.init(recordName: record.recordName, recordType: record.recordType, event: .delete, memberships: [membership],
                                   creator: record.created?.userRecordName))
        if membership != nil { try tx.setMembership(zone: zone, subtreeOf: record.recordName, to: nil) }
        try delete(record, deleting: &deleting)
    }

    private func delete(_ record: Record, deleting: inout Set<String>) throws {
        deleting.insert(record.recordName)
        let referrers = try tx.referrers(zone: zone, recordName: record.recordName)
        for referrer in referrers where referrer.action == .validate && !deleting.contains(referrer.recordName) {
            // Name the referrer only to someone who can see it.
            let visible = try access.isOwner || tx.recordWithMembership(zone: zone, name: referrer.recordName)
                .map { access.decide(.read, membership: $0.membership).isAllowed } ?? false
            let by = visible ? "'\(referrer.recordName)'" : "another record"
            throw CloudKitError(.validatingReferenceError, "record '\(record.recordName)' is referenced with VALIDATE by \(by); delete or change that record first")
        }
        for referrer in referrers where referrer.action == .deleteSelf && !deleting.contains(referrer.recordName) {
            guard let source = try tx.recordWithMembership(zone: zone, name: referrer.recordName) else { continue }
            if scope.database.database == .public { try UserRecords.refuseCascade(into: source.record) }
            // The same steps as any deletion: what was below it leaves its share.
            try delete(source.record, membership: source.membership, deleting: &deleting)
        }
        let sequence = try tx.nextChangeSequence(zone)
        try tx.deleteRecord(name: record.recordName, recordType: record.recordType, zone: zone, sequence: sequence)
    }

    /// Turns asset values with a receipt into stored assets; values without one must be the
    /// asset the field already holds (a record saved back as fetched).
    private func resolveAssets(_ fields: [String: FieldValue], previous: [String: FieldValue]) throws -> [String: FieldValue] {
        var result = fields
        for (name, value) in fields {
            switch value {
            case .asset:
                result[name] = try resolveAsset(value, field: name, previous: previous[name])
            case .list(let items, .asset):
                result[name] = .list(try items.map { try resolveAsset($0, field: name, previous: previous[name]) }, of: .asset)
            default:
                continue
            }
        }
        return result
    }

    private func resolveAsset(_ value: FieldValue, field: String, previous: FieldValue?) throws -> FieldValue {
        guard case .asset(let asset) = value else { return value }
        if let receipt = asset.receipt {
            guard let upload = try tx.assetUpload(token: receipt), upload.container == scope.database.container,
                  upload.environment == scope.database.environment, upload.owner == scope.database.owner,
                  let checksum = upload.checksum, let size = upload.size else {
                throw CloudKitError.badRequest("field '\(field)': asset receipt is unknown, expired or was never uploaded to")
            }
            guard checksum == asset.fileChecksum else {
                throw CloudKitError.badRequest("field '\(field)': fileChecksum does not match the uploaded bytes")
            }
            return .asset(Asset(fileChecksum: checksum, size: size, referenceChecksum: asset.referenceChecksum, wrappingKey: asset.wrappingKey))
        }
        // Without a receipt, only the asset the field already holds may be saved back, as stored.
        for case .asset(let stored) in previous?.elements ?? [] where stored.fileChecksum == asset.fileChecksum {
            return .asset(stored)
        }
        throw CloudKitError.badRequest("field '\(field)': an asset needs the receipt returned by its upload (assets/upload)")
    }
}

/// Record change tags: the zone change sequence of the write and the zone's storage key, in
/// base 36. Zone keys are never reused, so a record in a recreated zone never gets an old tag.
enum ChangeTags {
    static func tag(zone: Int64, sequence: Int64) -> String {
        String(sequence, radix: 36) + "-" + String(zone, radix: 36)
    }
}
