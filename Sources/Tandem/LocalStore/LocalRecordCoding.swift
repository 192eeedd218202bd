internal import Foundation
internal import TandemCore

/// How the local store keeps a record in a row: the record dictionary of CloudKit Web Services
/// (the same text the server sends, share keys included), read back with `Record(json:scope:)`.
enum LocalRecordCoding {
    static func encode(_ record: Record) -> String {
        var wire = TandemCore.Record(recordName: record.recordID.recordName, recordType: record.recordType,
                                     recordChangeTag: record.recordChangeTag, fields: record.fields,
                                     zoneID: record.recordID.zoneID.wire,
                                     created: stamp(record.creationDate, record.creatorUserRecordID),
                                     modified: stamp(record.modificationDate, record.lastModifiedUserRecordID),
                                     parent: record.parent?.recordID.recordName, share: record.share?.recordID.recordName)
        wire.sharing = record.shareState
        guard case .object(var o) = RecordCodec.encodeRecord(wire) else { return "{}" }
        // Files chosen for asset fields and not uploaded yet (uploaded when the record is sent).
        if !record.pendingAssets.isEmpty {
            o[pendingAssetsKey] = .object(JSONObject(record.pendingAssets.map { ($0.key, JSONValue.string($0.value.path)) }))
        }
        return JSONWriter.string(.object(o))
    }

    /// - Throws: `internalError` for a row the SDK did not write (a damaged file).
    static func decode(_ text: String, scope: Database.Scope) throws(TandemError) -> Record {
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch {
            throw TandemError(.internalError, "the local store holds a record that is not JSON: \(error)")
        }
        var record = try Record(json: json, scope: scope)
        if let pending = json[pendingAssetsKey]?.objectValue {
            for entry in pending.entries { if let path = entry.value.stringValue { record.pendingAssets[entry.key] = URL(fileURLWithPath: path) } }
        }
        return record
    }

    private static let pendingAssetsKey = "tandemPendingAssets"

    private static func stamp(_ date: Date?, _ user: Record.ID?) -> TandemCore.Record.Stamp? {
        guard let date else { return nil }
        return .init(timestamp: FieldValues.milliseconds(date), userRecordName: user?.recordName ?? "")
    }

    /// Unsent keys with the generation of the edit that last changed each, as a JSON object.
    static func pendingKeys(_ keys: [String: Int64]) -> String {
        JSONWriter.string(.object(JSONObject(keys.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) })))
    }

    /// Reads `pendingKeys(_:)`; a JSON array (files written before generations were kept) gives
    /// every key the row's last edit.
    static func pendingKeys(_ text: String?, edit: Int64) -> [String: Int64] {
        guard let text, let json = try? JSONParser.parse(text) else { return [:] }
        if let array = json.arrayValue { return Dictionary(array.compactMap(\.stringValue).map { ($0, edit) }, uniquingKeysWith: max) }
        var keys: [String: Int64] = [:]
        for entry in json.objectValue?.entries ?? [] { keys[entry.key] = entry.value.int64Value ?? edit }
        return keys
    }
}
