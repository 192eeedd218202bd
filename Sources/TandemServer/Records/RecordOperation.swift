import Foundation
public import TandemCore

/// One entry of `records/modify`'s `operations[]` (CloudKit Web Services: records/modify).
public struct RecordOperation: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case create, update, forceUpdate, replace, forceReplace, delete, forceDelete

        var checksTag: Bool { self == .update || self == .replace || self == .delete }
        var isDelete: Bool { self == .delete || self == .forceDelete }
        var replacesFields: Bool { self == .create || self == .replace || self == .forceReplace }
    }

    public var kind: Kind
    public var recordName: String
    public var recordType: String?
    public var recordChangeTag: String?
    /// Fields to set; a nil value clears the field.
    public var fields: [String: FieldValue?]
    public var parent: String?
    /// The zone the `parent` dictionary names, if it names one.
    public var parentZoneID: ZoneID?
    /// The zone the record dictionary names, if it names one; must be the request's zone.
    public var recordZoneID: ZoneID?
    public var clearsParent: Bool
    public var desiredKeys: Set<String>?
    /// On a new hierarchical share: the root record's name (`forRecord`).
    public var forRecord: String?
    /// The zone `forRecord` names, if it names one; must be the request's zone.
    public var forRecordZoneID: ZoneID?
    /// On a share record: the share keys the request sets.
    public var shareChanges = ShareCodec.Changes()

    /// Decodes one operation. Throws `BAD_REQUEST` with the operation's index in the reason.
    public static func decode(_ json: JSONValue, index: Int) throws(CloudKitError) -> RecordOperation {
        let context = "operations[\(index)]"
        guard case .object(let o) = json else { throw .badRequest("\(context) must be a dictionary") }
        guard let typeName = o["operationType"]?.stringValue else { throw .badRequest("\(context) needs 'operationType'") }
        guard let kind = Kind(rawValue: typeName) else {
            let known = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw .badRequest("\(context): unknown operationType '\(typeName)' (known: \(known))")
        }
        guard case .object(let record)? = o["record"] else { throw .badRequest("\(context) needs a 'record' dictionary") }
        var name: String
        if let n = record["recordName"], !n.isNull {
            guard let s = n.stringValue, Names.isValidRecordOrZoneName(s) else {
                throw .badRequest("\(context): recordName must be 1–255 printable ASCII characters")
            }
            name = s
        } else {
            guard kind == .create || kind == .forceReplace || kind == .forceUpdate else {
                throw .badRequest("\(context): \(kind.rawValue) needs a recordName")
            }
            name = UUIDs.make()
        }
        var recordType: String?
        if let t = record["recordType"], !t.isNull {
            guard let s = t.stringValue, Names.isValidRecordType(s) else {
                throw .badRequest("\(context): recordType must be a letter followed by letters, digits or '_'")
            }
            recordType = s
        }
        var tag: String?
        if let t = record["recordChangeTag"], !t.isNull {
            guard let s = t.stringValue else { throw .badRequest("\(context): recordChangeTag must be a string") }
            tag = s
        }
        if kind.checksTag && tag == nil {
            throw .badRequest("\(context): \(kind.rawValue) needs the record's recordChangeTag (or use force\(kind.rawValue.prefix(1).uppercased() + kind.rawValue.dropFirst()))")
        }
        if kind == .create && recordType == nil {
            throw .badRequest("\(context): create needs a recordType")
        }
        var fields: [String: FieldValue?] = [:]
        if let f = record["fields"], !f.isNull, !kind.isDelete {
            guard case .object(let object) = f else { throw .badRequest("\(context): 'fields' must be a dictionary") }
            for entry in object.entries {
                guard Names.isValidFieldName(entry.key) || Share.systemFields.contains(entry.key) else {
                    throw .badRequest("\(context): invalid field name '\(entry.key)' (a letter, then letters, digits or '_')")
                }
                if entry.value.isNull || entry.value["value"]?.isNull == true {
                    fields[entry.key] = .some(nil)
                } else {
                    fields[entry.key] = try FieldCodec.decodeField(entry.value, name: entry.key)
                }
            }
        }
        var parent: String?
        var parentZoneID: ZoneID?
        var clearsParent = false
        if let p = record["parent"] {
            if p.isNull {
                clearsParent = true
            } else {
                guard let parentName = p["recordName"]?.stringValue, Names.isValidRecordOrZoneName(parentName) else {
                    throw .badRequest("\(context): parent must be a dictionary with a 'recordName'")
                }
                guard parentName != name else { throw .badRequest("\(context): a record cannot be its own parent") }
                parent = parentName
                if let zone = p["zoneID"], !zone.isNull { parentZoneID = try RecordCodec.decodeZoneID(zone) }
            }
        }
        var recordZoneID: ZoneID?
        if let zone = record["zoneID"], !zone.isNull { recordZoneID = try RecordCodec.decodeZoneID(zone) }
        var operation = RecordOperation(kind: kind, recordName: name, recordType: recordType, recordChangeTag: tag, fields: fields,
                                        parent: parent, parentZoneID: parentZoneID, recordZoneID: recordZoneID, clearsParent: clearsParent,
                                        desiredKeys: try desiredKeys(o["desiredKeys"]))
        if let f = record["forRecord"], !f.isNull {
            guard let root = f["recordName"]?.stringValue, Names.isValidRecordOrZoneName(root) else {
                throw .badRequest("\(context): forRecord must be a dictionary with the root record's 'recordName'")
            }
            operation.forRecord = root
            if let zone = f["zoneID"], !zone.isNull { operation.forRecordZoneID = try RecordCodec.decodeZoneID(zone) }
        }
        operation.shareChanges = try ShareCodec.decodeChanges(record, context: context)
        if !operation.shareChanges.isEmpty || operation.forRecord != nil, recordType.map({ $0 != Share.recordType }) ?? false {
            throw .badRequest("\(context): forRecord, publicPermission, participants, allowsAccessRequests and allowedSharingOptions belong on a cloudkit.share record")
        }
        return operation
    }

    /// Decodes a `desiredKeys` array of field names; nil when absent.
    public static func desiredKeys(_ json: JSONValue?) throws(CloudKitError) -> Set<String>? {
        guard let json, !json.isNull else { return nil }
        guard case .array(let items) = json else { throw .badRequest("desiredKeys must be an array of field names") }
        var keys = Set<String>()
        for item in items {
            guard let s = item.stringValue else { throw .badRequest("desiredKeys must be an array of field names") }
            keys.insert(s)
        }
        return keys
    }
}

/// Random record names, as CloudKit assigns when a create omits `recordName`.
public enum UUIDs {
    public static func make() -> String { UUID.random().uuidString }
}
