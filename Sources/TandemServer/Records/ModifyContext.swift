import TandemCore
import TandemStore

/// Applies `records/modify` operations inside one store transaction: version checks, field
/// merging, reference rules and change tags (CloudKit Web Services: records/modify; Tandem
/// decisions D2 for conflicts).
struct ModifyContext {
    let tx: any StoreWriting
    let zone: StoredZone
    let scope: RequestScope
    let now: Int64

    func apply(_ op: RecordOperation) throws -> RecordService.ItemResult {
        if let named = op.recordZoneID, !isThisZone(named) {
            throw CloudKitError.badRequest("the record names zone '\(named.zoneName)' but the request addresses zone '\(zone.zoneID.zoneName)'; send one request per zone")
        }
        if let named = op.parentZoneID, !isThisZone(named) {
            throw CloudKitError.badRequest("a parent must be in the record's own zone ('\(zone.zoneID.zoneName)')")
        }
        let existing = try tx.record(zone: zone, name: op.recordName)
        if existing == nil && (op.kind.checksTag || op.kind == .forceDelete) {
            throw CloudKitError(.notFound, "record '\(op.recordName)' does not exist")
        }
        if let existing, op.kind.checksTag, existing.recordChangeTag != op.recordChangeTag {
            var error = CloudKitError(.conflict, "recordChangeTag '\(op.recordChangeTag ?? "")' is stale; the server has '\(existing.recordChangeTag ?? "")'. Fetch the record and retry, or use a force operation")
            error.serverRecord = existing
            throw error
        }
        switch op.kind {
        case .delete, .forceDelete:
            guard let existing else { throw CloudKitError(.notFound, "record '\(op.recordName)' does not exist") }
            var deleting = Set<String>()
            try delete(existing, deleting: &deleting)
            return .deleted(recordName: op.recordName)
        case .create:
            if let existing {
                var error = CloudKitError(.exists, "record '\(op.recordName)' already exists; use update with its recordChangeTag")
                error.serverRecord = existing
                throw error
            }
            return .saved(try save(op, over: nil))
        case .update, .replace, .forceUpdate, .forceReplace:
            return .saved(try save(op, over: existing))
        }
    }

    private func save(_ op: RecordOperation, over existing: Record?) throws -> Record {
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
        fields = try resolveAssets(fields, previous: existing?.fields ?? [:])
        try checkReferences(fields, recordName: op.recordName)
        var parent = op.clearsParent ? nil : (op.parent ?? existing?.parent)
        if op.kind.replacesFields && op.parent == nil { parent = nil }
        // A parent is checked when it is set; a record keeps a parent that was deleted since.
        if let parent, parent != existing?.parent, try tx.record(zone: zone, name: parent) == nil {
            throw CloudKitError(.validatingReferenceError, "parent record '\(parent)' does not exist in zone '\(zone.zoneID.zoneName)'")
        }
        let size = Self.encodedSize(fields)
        guard size <= Limits.recordBytes else {
            throw CloudKitError(.limitExceeded, "record '\(op.recordName)' is \(size) bytes; a record's fields may hold at most \(Limits.recordBytes) bytes (1 MiB, assets excluded)")
        }
        let sequence = try tx.nextChangeSequence(zone)
        let stamp = Record.Stamp(timestamp: now, userRecordName: scope.user, deviceID: scope.deviceID)
        let record = Record(recordName: op.recordName, recordType: recordType, recordChangeTag: ChangeTags.tag(zone: zone.key, sequence: sequence),
                            fields: fields, zoneID: zone.zoneID, created: existing?.created ?? stamp, modified: stamp,
                            parent: parent, share: existing?.share)
        try tx.putRecord(record, zone: zone, sequence: sequence)
        return record
    }

    static func encodedSize(_ fields: [String: FieldValue]) -> Int {
        var total = 0
        for (name, value) in fields { total += name.utf8.count + JSONWriter.bytes(FieldCodec.encodeField(value)).count }
        return total
    }

    /// True when `zoneID` names the zone being modified (an absent owner means the caller).
    private func isThisZone(_ zoneID: ZoneID) -> Bool {
        zoneID.zoneName == zone.zoneID.zoneName && (zoneID.ownerRecordName.map { $0 == scope.database.owner } ?? true)
    }

    /// References stay inside the zone (as in CloudKit); VALIDATE targets must exist; a
    /// DELETE_SELF target may have at most 750 such referrers.
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
    private func delete(_ record: Record, deleting: inout Set<String>) throws {
        deleting.insert(record.recordName)
        let referrers = try tx.referrers(zone: zone, recordName: record.recordName)
        for referrer in referrers where referrer.action == .validate && !deleting.contains(referrer.recordName) {
            throw CloudKitError(.validatingReferenceError, "record '\(record.recordName)' is referenced with VALIDATE by '\(referrer.recordName)'; delete or change that record first")
        }
        for referrer in referrers where referrer.action == .deleteSelf && !deleting.contains(referrer.recordName) {
            guard let source = try tx.record(zone: zone, name: referrer.recordName) else { continue }
            try delete(source, deleting: &deleting)
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
