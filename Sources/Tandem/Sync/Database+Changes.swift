internal import TandemCore

/// Zones changed in a database since a token (`CKDatabase.databaseChanges(since:)`).
public struct DatabaseChanges: Sendable {
    /// A zone that is gone from the database, and why: `DELETED` (the zone was deleted),
    /// `ACCESS_LOST` (a share was left or revoked, decisions S2) or another server reason.
    public struct Deletion: Sendable, Hashable {
        public var zoneID: RecordZone.ID
        public var reason: String
    }

    /// One entry of the feed.
    public enum ZoneChange: Sendable, Hashable {
        case modified(RecordZone.ID)
        case deleted(Deletion)
    }

    /// Zones with changes since the token (fetch them with `recordZoneChanges`).
    public var modifications: [RecordZone.ID]
    public var deletions: [Deletion]
    /// Every entry in the order the server listed them. Apply them in this order: a zone can be
    /// listed as deleted and then modified (access lost, then a new invitation accepted), and
    /// then it exists again (K28).
    public var changes: [ZoneChange] = []
    /// Pass to the next call.
    public var changeToken: ServerChangeToken
    /// True when more changes wait: call again at once with `changeToken`.
    public var moreComing: Bool
}

/// Records changed in one zone since a token (`CKDatabase.recordZoneChanges(inZoneWith:since:)`).
public struct RecordZoneChanges: Sendable {
    /// A deleted record and its type (tombstones keep the type, decisions S1).
    public struct Deletion: Sendable, Hashable {
        public var recordID: Record.ID
        public var recordType: String
    }

    /// Records created or changed, each in its latest state (one entry per record).
    public var modifications: [Record]
    public var deletions: [Deletion]
    public var changeToken: ServerChangeToken
    public var moreComing: Bool
}

extension Database {
    /// Zones changed since `token`, or every current zone when nil (decisions S5); changes/database.
    /// Private and shared databases. Throws `changeTokenExpired`, `notAuthenticated`.
    public func databaseChanges(since token: ServerChangeToken?, resultsLimit: Int? = nil) async throws(TandemError) -> DatabaseChanges {
        var body = JSONObject()
        if let token { body["syncToken"] = .string(token.value) }
        if let resultsLimit { body["resultsLimit"] = .int(Int64(resultsLimit)) }
        let json = try await post("changes/database", body)
        var changes = DatabaseChanges(modifications: [], deletions: [], changeToken: try changeToken(json),
                                      moreComing: json["moreComing"]?.boolValue ?? false)
        for item in try [JSONValue].items(json, "zones", in: "changes/database") {
            let id = try zone(item).zoneID
            if item["deleted"]?.boolValue == true {
                let deletion = DatabaseChanges.Deletion(zoneID: id, reason: item["reason"]?.stringValue ?? "DELETED")
                changes.deletions.append(deletion)
                changes.changes.append(.deleted(deletion))
            } else {
                changes.modifications.append(id)
                changes.changes.append(.modified(id))
            }
        }
        return changes
    }

    /// Records changed in a zone since `token`, or every current record when nil (decisions S3);
    /// changes/zone. At most `resultsLimit` records (server maximum applies) per call; loop
    /// while `moreComing`. Throws `changeTokenExpired` (refetch without a token), `zoneNotFound`.
    public func recordZoneChanges(inZoneWith zoneID: RecordZone.ID, since token: ServerChangeToken?, desiredKeys: [String]? = nil,
                                  resultsLimit: Int? = nil) async throws(TandemError) -> RecordZoneChanges {
        var entry: JSONObject = ["zoneID": RecordCodec.encodeZoneID(zoneID.wire)]
        if let token { entry["syncToken"] = .string(token.value) }
        if let resultsLimit { entry["resultsLimit"] = .int(Int64(resultsLimit)) }
        if let desiredKeys { entry["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
        let json = try await post("changes/zone", ["zones": .array([.object(entry)])])
        guard let zoneJSON = try [JSONValue].items(json, "zones", in: "changes/zone").first else {
            throw TandemError(.internalError, "changes/zone answered without the zone")
        }
        if let error = itemError(zoneJSON) { throw error }
        var changes = RecordZoneChanges(modifications: [], deletions: [], changeToken: try changeToken(zoneJSON),
                                        moreComing: zoneJSON["moreComing"]?.boolValue ?? false)
        for item in try [JSONValue].items(zoneJSON, "records", in: "changes/zone") {
            let record = try Record(json: item, scope: databaseScope)
            if item["deleted"]?.boolValue == true {
                changes.deletions.append(.init(recordID: Record.ID(recordName: record.recordID.recordName, zoneID: zoneID),
                                               recordType: record.recordType))
            } else {
                changes.modifications.append(record)
            }
        }
        return changes
    }

    private func changeToken(_ json: JSONValue) throws(TandemError) -> ServerChangeToken {
        guard let token = json["syncToken"]?.stringValue else { throw TandemError(.internalError, "a change feed answered without a syncToken") }
        return ServerChangeToken(token)
    }
}
