public import Foundation
internal import TandemCore

/// A record: a type, an ID, typed fields and the system fields the server keeps (CloudKit's
/// `CKRecord`, here a value type).
///
/// ```swift
/// var note = Record(recordType: "Note", recordID: Record.ID(recordName: "note-1", zoneID: trips.zoneID))
/// note["title"] = "Lisbon in May"
/// note["stars"] = 5
/// note = try await database.save(note)
/// let title = note["title"] as? String
/// let stars = note["stars"] as? Int        // numbers read back as NSNumber: as? Int, Int64, Bool
/// ```
///
/// Keep the record the server returned and edit that: it carries the `recordChangeTag` a
/// `.ifServerRecordUnchanged` save is checked against (CloudKit's system fields). Field names
/// are a letter then letters, digits or `_`, at most 255 characters; a record holds at most
/// 1 MB of field data (CloudKit Web Services limits, decisions D12).
public struct Record: Sendable, Hashable {
    /// A record's identity (CloudKit's `CKRecord.ID`): its name within a zone.
    public struct ID: Sendable, Hashable, CustomStringConvertible {
        public var recordName: String
        public var zoneID: RecordZone.ID

        /// A new ID; the name defaults to a fresh UUID, as CloudKit's does.
        public init(recordName: String = UUID().uuidString, zoneID: RecordZone.ID = .default) {
            self.recordName = recordName
            self.zoneID = zoneID
        }

        public var description: String { "\(recordName) in \(zoneID)" }
    }

    public let recordType: String
    public let recordID: ID
    /// The server's version of this record; nil until it has been saved (a system field).
    public internal(set) var recordChangeTag: String?
    public internal(set) var creationDate: Date?
    public internal(set) var modificationDate: Date?
    public internal(set) var creatorUserRecordID: ID?
    public internal(set) var lastModifiedUserRecordID: ID?
    /// The record above this one in a share hierarchy (same zone). Everything reachable from a
    /// share's root through `parent` is in the share (CloudKit: `CKRecord.parent`).
    public var parent: Reference? {
        didSet { parentChanged = true }
    }
    /// The share this record is the root of, when it is one (CloudKit: `CKRecord.share`).
    public internal(set) var share: Reference?

    var fields: [String: FieldValue]
    /// Assets set from local files, uploaded on save.
    var pendingAssets: [String: URL] = [:]
    var changed: Set<String> = []
    /// Fields set to a value the SDK cannot store, with its type: saving throws (F31).
    var unstorable: [String: String] = [:]
    var parentChanged = false
    /// On `cloudkit.share` records: the share keys as the server sent them.
    var shareState: TandemCore.Share?
    /// On `cloudkit.share` records built from a `Share`: the share keys to send.
    var shareDraft: ShareDraft?

    /// A new record. Nothing is sent until it is saved.
    public init(recordType: String, recordID: ID = ID()) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = [:]
    }

    /// A field's value, or nil. Setting nil removes the field on the next save. See
    /// `RecordValue` for what each Swift type is stored as; a numeric field reads back as an
    /// `NSNumber`, so `as? Int`, `as? Int64` and `as? Bool` all work. A value of a type the SDK
    /// cannot store reads back as nil and makes saving the record throw `invalidArguments`.
    public subscript(key: String) -> (any RecordValue)? {
        get {
            if let url = pendingAssets[key] { return Asset(fileURL: url) }
            return fields[key].map { FieldValues.decode($0, zoneID: recordID.zoneID) }
        }
        set {
            changed.insert(key)
            pendingAssets[key] = nil
            unstorable[key] = nil
            guard let newValue else { fields[key] = nil; return }
            guard let value = FieldValues.encode(newValue) else {
                // An app's own RecordValue type: refused when the record is saved, never a trap here.
                fields[key] = nil
                unstorable[key] = String(describing: type(of: newValue))
                return
            }
            if let asset = newValue as? Asset, asset.receipt == nil, asset.fileChecksum == nil, let url = asset.fileURL {
                pendingAssets[key] = url
            }
            fields[key] = value
        }
    }

    /// Throws `invalidArguments` naming the first field set to a value of a type the SDK cannot
    /// store (an app's own `RecordValue`), before anything is sent (F31).
    func checkStorable() throws(TandemError) {
        guard let (key, type) = unstorable.min(by: { $0.key < $1.key }) else { return }
        throw TandemError(.invalidArguments, "field '\(key)' of record '\(recordID.recordName)' holds a \(type), which a record "
            + "cannot store: use String, Int, Int64, Bool, Double, Date, Data, Reference, Location, Asset or an array of one (see RecordValue)")
    }

    /// The names of the fields that hold a value.
    public func allKeys() -> [String] { fields.keys.sorted() }

    /// Fields set since the record was created or last came from the server (`CKRecord.changedKeys()`).
    public func changedKeys() -> [String] { changed.sorted() }

    /// Sets `parent` from a record ID with action `.none`, as CloudKit's `setParent(_:)`.
    public mutating func setParent(_ parentID: ID?) {
        parent = parentID.map { Reference(recordID: $0) }
    }

    public static func == (lhs: Record, rhs: Record) -> Bool {
        lhs.recordID == rhs.recordID && lhs.recordType == rhs.recordType && lhs.recordChangeTag == rhs.recordChangeTag
            && lhs.fields == rhs.fields && lhs.unstorable == rhs.unstorable && lhs.parent == rhs.parent && lhs.share == rhs.share && lhs.pendingAssets == rhs.pendingAssets
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(recordID)
        hasher.combine(recordChangeTag)
    }
}

extension Record {
    /// A record from a response dictionary, in the database it was read from.
    init(json: JSONValue, scope: Database.Scope) throws(TandemError) {
        let wire: TandemCore.Record
        do { wire = try RecordCodec.decodeRecord(json) } catch {
            throw TandemError(.internalError, "the server sent a record the SDK cannot read: \(error.reason)")
        }
        let zoneID = RecordZone.ID(wire: wire.zoneID, scope: scope)
        self.init(recordType: wire.recordType, recordID: ID(recordName: wire.recordName, zoneID: zoneID))
        recordChangeTag = wire.recordChangeTag
        fields = wire.fields
        creationDate = wire.created.map { FieldValues.date($0.timestamp) }
        modificationDate = wire.modified.map { FieldValues.date($0.timestamp) }
        creatorUserRecordID = wire.created.map { ID(recordName: $0.userRecordName) }
        lastModifiedUserRecordID = wire.modified.map { ID(recordName: $0.userRecordName) }
        parent = wire.parent.map { Reference(recordID: ID(recordName: $0, zoneID: zoneID)) }
        share = wire.share.map { Reference(recordID: ID(recordName: $0, zoneID: zoneID)) }
        parentChanged = false
        if let object = json.objectValue { shareState = ShareCodec.decodeShare(object) }
    }
}
