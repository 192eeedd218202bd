import Foundation
internal import TandemCore

/// What `modifyRecords` did to each record: CloudKit's async `modifyRecords` answer.
public struct ModifyRecordsResult: Sendable {
    /// Each saved record as the server now holds it (new change tag), or why it was not saved.
    public var saveResults: [Record.ID: Result<Record, TandemError>]
    /// Each deletion, or why it failed.
    public var deleteResults: [Record.ID: Result<Void, TandemError>]

    /// The failures as one `partialFailure` error keyed by record ID (what
    /// `CKModifyRecordsOperation` reports), or nil when every item succeeded. In an atomic batch
    /// that failed, the items that caused it carry their own error and the rest `batchRequestFailed`.
    public var partialFailure: TandemError? {
        var errors: [TandemError.ItemID: TandemError] = [:]
        for (id, result) in saveResults { if case .failure(let e) = result { errors[.record(id)] = e } }
        for (id, result) in deleteResults { if case .failure(let e) = result { errors[.record(id)] = e } }
        guard !errors.isEmpty else { return nil }
        return TandemError(.partialFailure, "\(errors.count) of \(saveResults.count + deleteResults.count) items failed",
                           partialErrorsByItemID: errors)
    }

    /// The share saved under `shareID` as a `Share`, with its `url` (CloudKit hands the saved
    /// `CKShare` back in `saveResults`). Throws the share's own save error (`serverRecordChanged`,
    /// `alreadyShared`, `tooManyParticipants`, `batchRequestFailed`, ...), or `invalidArguments`
    /// when this call saved no record `shareID` or saved one that is not a `cloudkit.share` (F33).
    public func savedShare(withID shareID: Record.ID) throws(TandemError) -> Share {
        guard let result = saveResults[shareID] else {
            throw TandemError(.invalidArguments, "this modifyRecords call saved no record '\(shareID.recordName)'")
        }
        let record = try result.get()
        guard let share = Share(record) else {
            throw TandemError(.invalidArguments, "record '\(shareID.recordName)' is a \(record.recordType), not a \(Share.recordType)")
        }
        return share
    }

    /// The saved version of `share` (`savedShare(withID: share.recordID)`):
    ///
    /// ```swift
    /// let result = try await database.modifyRecords(saving: [trip, share.record], deleting: [])
    /// let url = try result.savedShare(share).url!     // send it to the invitees
    /// ```
    public func savedShare(_ share: Share) throws(TandemError) -> Share {
        try savedShare(withID: share.recordID)
    }
}

extension Database {
    /// Saves one record (`CKDatabase.save(_:)`) and returns it as the server holds it now.
    ///
    /// Policy `.ifServerRecordUnchanged`. Throws the record's own error: `serverRecordChanged`
    /// with `serverRecord` when it changed on the server (or, new, already exists: save the
    /// server's copy with your fields set, or use `modifyRecords` with `savePolicy` `.changedKeys`
    /// or `.allKeys`), `invalidArguments` for a field value the SDK cannot store,
    /// `zoneNotFound`, `permissionFailure`, `invalidArguments`, `limitExceeded`, ...
    @discardableResult
    public func save(_ record: Record) async throws(TandemError) -> Record {
        let result = try await modifyRecords(saving: [record], deleting: [])
        guard let saved = result.saveResults[record.recordID] else { throw TandemError(.internalError, "no result for \(record.recordID)") }
        return try saved.get()
    }

    /// Fetches one record (`CKDatabase.record(for:)`). Throws `unknownItem` when it does not exist
    /// (or the caller cannot see it), `zoneNotFound`, `permissionFailure`.
    public func record(for recordID: Record.ID) async throws(TandemError) -> Record {
        guard let result = try await records(for: [recordID])[recordID] else {
            throw TandemError(.internalError, "no result for \(recordID)")
        }
        return try result.get()
    }

    /// Fetches several records (`CKDatabase.records(for:desiredKeys:)`); one request per zone.
    /// `desiredKeys` limits the fields returned (nil: all). Per-record failures are in the results.
    public func records(for recordIDs: [Record.ID], desiredKeys: [String]? = nil)
        async throws(TandemError) -> [Record.ID: Result<Record, TandemError>] {
        var results: [Record.ID: Result<Record, TandemError>] = [:]
        for (zoneID, ids) in Self.groupedByZone(recordIDs) {
            var body: JSONObject = ["zoneID": RecordCodec.encodeZoneID(zoneID.wire),
                                    "records": .array(ids.map { .object(["recordName": .string($0.recordName)]) })]
            if let desiredKeys { body["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
            let items = try [JSONValue].items(try await post("records/lookup", body), "records", in: "records/lookup")
            for (id, item) in zip(ids, items) {
                if let error = itemError(item) { results[id] = .failure(error); continue }
                do throws(TandemError) { results[id] = .success(try Record(json: item, scope: databaseScope)) }
                catch { results[id] = .failure(error) }
            }
        }
        return results
    }

    /// Deletes one record (`CKDatabase.deleteRecord(withID:)`), unconditionally (`forceDelete`).
    /// Throws `unknownItem`, `permissionFailure`, `referenceViolation` (a `VALIDATE` reference
    /// still points at it), `zoneNotFound`.
    @discardableResult
    public func deleteRecord(withID recordID: Record.ID) async throws(TandemError) -> Record.ID {
        let result = try await modifyRecords(saving: [], deleting: [recordID])
        try result.deleteResults[recordID]?.get()
        return recordID
    }

    /// Saves and deletes records in one call (`CKDatabase.modifyRecords(saving:deleting:savePolicy:atomically:)`).
    ///
    /// - One `records/modify` request per zone (CloudKit Web Services: one `zoneID` per request),
    ///   at most 200 operations each (`Limits.operationsPerRequest`; more is `limitExceeded`).
    /// - `atomically`: in a custom zone, all of a zone's operations succeed or none does; a failed
    ///   batch reports the culprit's error and `batchRequestFailed` for the others. Zones are
    ///   committed separately, as in CloudKit.
    /// - Assets set from local files are uploaded first (assets/upload).
    /// - A new `Share` saved with its root record creates both in one request.
    /// - Per-item failures are in the result (`partialFailure` gathers them); whole-request
    ///   failures (`notAuthenticated`, `zoneNotFound` for the request, network) are thrown.
    public func modifyRecords(saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID],
                              savePolicy: SavePolicy = .ifServerRecordUnchanged, atomically: Bool = true)
        async throws(TandemError) -> ModifyRecordsResult {
        try await modifyRecords(saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically,
                                retryingLostAnswers: true)
    }

    /// `retryingLostAnswers: false` (the sync engine) does not repeat a request whose answer was
    /// lost: it may have been applied, and repeating a create after another device deleted the
    /// record would bring it back (K25). The engine fetches before it sends again.
    func modifyRecords(saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID],
                       savePolicy: SavePolicy, atomically: Bool, retryingLostAnswers: Bool)
        async throws(TandemError) -> ModifyRecordsResult {
        for record in recordsToSave { try record.checkStorable() }
        var result = ModifyRecordsResult(saveResults: [:], deleteResults: [:])
        var zones: [RecordZone.ID] = []
        for id in recordsToSave.map(\.recordID) + recordIDsToDelete where !zones.contains(id.zoneID) { zones.append(id.zoneID) }
        for zoneID in zones {
            var saves: [Record] = []
            for record in recordsToSave where record.recordID.zoneID == zoneID { saves.append(try await uploadingAssets(record)) }
            let deletes = recordIDsToDelete.filter { $0.zoneID == zoneID }
            let operations = saves.map { encodeSave($0, policy: savePolicy) }
                + deletes.map { JSONValue.object(["operationType": "forceDelete", "record": .object(["recordName": .string($0.recordName)])]) }
            let body: JSONObject = ["zoneID": RecordCodec.encodeZoneID(zoneID.wire), "atomic": .bool(atomically),
                                    "operations": .array(operations)]
            let items = try [JSONValue].items(try await post("records/modify", body, retryingLostAnswers: retryingLostAnswers), "records", in: "records/modify")
            for (index, item) in items.enumerated() {
                let error = itemError(item)
                if index < saves.count {
                    let id = saves[index].recordID
                    if let error { result.saveResults[id] = .failure(SaveErrors.inSDKTerms(error, saving: saves[index])); continue }
                    do throws(TandemError) { result.saveResults[id] = .success(try Record(json: item, scope: databaseScope)) }
                    catch { result.saveResults[id] = .failure(error) }
                } else if index - saves.count < deletes.count {
                    result.deleteResults[deletes[index - saves.count]] = error.map { .failure($0) } ?? .success(())
                }
            }
        }
        return result
    }

    static func groupedByZone(_ ids: [Record.ID]) -> [(RecordZone.ID, [Record.ID])] {
        var groups: [(RecordZone.ID, [Record.ID])] = []
        for id in ids {
            if let index = groups.firstIndex(where: { $0.0 == id.zoneID }) { groups[index].1.append(id) }
            else { groups.append((id.zoneID, [id])) }
        }
        return groups
    }

    /// One `records/modify` operation for a save; see `SavePolicy` for the operation types.
    func encodeSave(_ record: Record, policy: SavePolicy) -> JSONValue {
        let isShare = record.recordType == Share.recordType
        let operationType = isShare ? (record.recordChangeTag == nil ? "create" : "update")
            : policy.operationType(hasChangeTag: record.recordChangeTag != nil)
        var keys = Set(record.changed)
        if operationType == "create" || operationType == "forceReplace" { keys = Set(record.fields.keys) }
        var fields = JSONObject()
        for key in keys.sorted() {
            fields[key] = record.fields[key].map { FieldCodec.encodeField($0) } ?? .null
        }
        var o: JSONObject = ["recordName": .string(record.recordID.recordName), "recordType": .string(record.recordType),
                             "fields": .object(fields)]
        if let tag = record.recordChangeTag, operationType != "forceUpdate", operationType != "forceReplace" {
            o["recordChangeTag"] = .string(tag)
        }
        if record.parentChanged || operationType == "forceReplace" || (operationType == "create" && record.parent != nil) {
            o["parent"] = record.parent.map { .object(["recordName": .string($0.recordID.recordName)]) } ?? .null
        }
        if let draft = record.shareDraft { draft.encode(into: &o) }
        return .object(["operationType": .string(operationType), "record": .object(o)])
    }

    /// Uploads the record's assets that come from local files and puts their receipts in it.
    func uploadingAssets(_ record: Record) async throws(TandemError) -> Record {
        guard !record.pendingAssets.isEmpty else { return record }
        var record = record
        let names = record.pendingAssets.keys.sorted()
        let body: JSONObject = ["zoneID": RecordCodec.encodeZoneID(record.recordID.zoneID.wire), "tokens": .array(names.map {
            .object(["recordName": .string(record.recordID.recordName), "recordType": .string(record.recordType), "fieldName": .string($0)])
        })]
        let tokens = try [JSONValue].items(try await post("assets/upload", body), "tokens", in: "assets/upload")
        for (name, token) in zip(names, tokens) {
            guard let text = token["url"]?.stringValue, let url = URL(string: text) else {
                throw itemError(token) ?? TandemError(.internalError, "assets/upload answered without a url")
            }
            let fileURL = record.pendingAssets[name]!
            let bytes: Data
            do { bytes = try Data(contentsOf: fileURL) } catch {
                throw TandemError(.assetFileNotFound, "cannot read \(fileURL.path): \(error)")
            }
            let answer = try await transport.send(url, method: "POST", body: bytes, contentType: "application/octet-stream")
            let receipt = (try? JSONParser.parse([UInt8](answer)))?["singleFile"]
            guard let checksum = receipt?["fileChecksum"]?.stringValue, let size = receipt?["size"]?.int64Value,
                  let token = receipt?["receipt"]?.stringValue else {
                throw TandemError(.internalError, "the asset upload answered without a receipt")
            }
            record.fields[name] = .asset(TandemCore.Asset(fileChecksum: checksum, size: size, receipt: token))
            record.pendingAssets[name] = nil
        }
        return record
    }
}
