internal import TandemCore

extension Database {
    /// Creates a zone (`CKDatabase.save(_:)` for zones; zones/modify `create`). Saving a zone
    /// that exists succeeds. Throws `permissionFailure` outside the private database,
    /// `invalidArguments` for a bad name.
    @discardableResult
    public func save(_ zone: RecordZone) async throws(TandemError) -> RecordZone {
        let result = try await modifyRecordZones(saving: [zone], deleting: [])
        return try result.saveResults[zone.zoneID]!.get()
    }

    /// Fetches one zone (`CKDatabase.recordZone(for:)`; zones/lookup). Throws `zoneNotFound`.
    public func recordZone(for zoneID: RecordZone.ID) async throws(TandemError) -> RecordZone {
        let json = try await post("zones/lookup", ["zones": .array([RecordCodec.encodeZoneID(zoneID.wire)])])
        guard let item = try [JSONValue].items(json, "zones", in: "zones/lookup").first else {
            throw TandemError(.internalError, "zones/lookup answered without a zone")
        }
        if let error = itemError(item) { throw error }
        return try zone(item)
    }

    /// Every zone of the database (`CKDatabase.allRecordZones()`; zones/list). In the shared
    /// database: the zones of accepted shares, with their owners.
    public func allRecordZones() async throws(TandemError) -> [RecordZone] {
        let items = try [JSONValue].items(try await get("zones/list"), "zones", in: "zones/list")
        var zones: [RecordZone] = []
        for item in items where itemError(item) == nil { zones.append(try zone(item)) }
        return zones
    }

    /// Deletes a zone and every record in it (`CKDatabase.deleteRecordZone(withID:)`). In the
    /// shared database this leaves the share. Throws `zoneNotFound`.
    @discardableResult
    public func deleteRecordZone(withID zoneID: RecordZone.ID) async throws(TandemError) -> RecordZone.ID {
        let result = try await modifyRecordZones(saving: [], deleting: [zoneID])
        try result.deleteResults[zoneID]!.get()
        return zoneID
    }

    /// Creates and deletes zones in one request (`CKDatabase.modifyRecordZones(saving:deleting:)`).
    public func modifyRecordZones(saving zonesToSave: [RecordZone], deleting zoneIDsToDelete: [RecordZone.ID]) async throws(TandemError)
        -> (saveResults: [RecordZone.ID: Result<RecordZone, TandemError>], deleteResults: [RecordZone.ID: Result<Void, TandemError>]) {
        let operations: [JSONValue] = zonesToSave.map {
            .object(["operationType": "create", "zone": .object(["zoneID": RecordCodec.encodeZoneID($0.zoneID.wire)])])
        } + zoneIDsToDelete.map {
            .object(["operationType": "delete", "zone": .object(["zoneID": RecordCodec.encodeZoneID($0.wire)])])
        }
        let items = try [JSONValue].items(try await post("zones/modify", ["operations": .array(operations)]), "zones", in: "zones/modify")
        var saves: [RecordZone.ID: Result<RecordZone, TandemError>] = [:]
        var deletes: [RecordZone.ID: Result<Void, TandemError>] = [:]
        for (index, item) in items.enumerated() {
            let error = itemError(item)
            if index < zonesToSave.count {
                let id = zonesToSave[index].zoneID
                if let error { saves[id] = .failure(error) } else {
                    do throws(TandemError) { saves[id] = .success(try zone(item)) } catch { saves[id] = .failure(error) }
                }
            } else if index - zonesToSave.count < zoneIDsToDelete.count {
                deletes[zoneIDsToDelete[index - zonesToSave.count]] = error.map { .failure($0) } ?? .success(())
            }
        }
        return (saves, deletes)
    }

    func zone(_ item: JSONValue) throws(TandemError) -> RecordZone {
        guard let json = item["zoneID"], let wire = try? RecordCodec.decodeZoneID(json) else {
            throw TandemError(.internalError, "a zone answer without a zoneID")
        }
        var zone = RecordZone(zoneID: RecordZone.ID(wire: wire, scope: databaseScope))
        if let name = item["share"]?["recordName"]?.stringValue {
            zone.share = Reference(recordID: Record.ID(recordName: name, zoneID: zone.zoneID))
        }
        return zone
    }
}
