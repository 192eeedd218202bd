internal import TandemCore

extension Database {
    /// One page of query results: each match in order, and a cursor when more remain.
    public typealias QueryResults = (matchResults: [(Record.ID, Result<Record, TandemError>)], queryCursor: Query.Cursor?)

    /// Runs a query (`CKDatabase.records(matching:inZoneWith:desiredKeys:resultsLimit:)`;
    /// CloudKit Web Services records/query).
    ///
    /// - `zoneID`: nil searches every zone of the private database (`zoneWide`); the shared
    ///   database needs one zone (decisions T17).
    /// - `resultsLimit`: 1–200 records per page (CloudKit's maximum); pass the returned cursor to
    ///   `records(continuingMatchFrom:)` for the next page.
    /// - Throws `invalidArguments` (a field without its index, a bad filter), `zoneNotFound`.
    public func records(matching query: Query, inZoneWith zoneID: RecordZone.ID? = nil, desiredKeys: [String]? = nil,
                        resultsLimit: Int = 200) async throws(TandemError) -> QueryResults {
        try await runQuery(query, zoneID: zoneID, marker: nil, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// The next page of a query (`CKDatabase.records(continuingMatchFrom:)`). Throws
    /// `invalidArguments` for a cursor from another query.
    public func records(continuingMatchFrom cursor: Query.Cursor, desiredKeys: [String]? = nil,
                        resultsLimit: Int = 200) async throws(TandemError) -> QueryResults {
        try await runQuery(cursor.query, zoneID: cursor.zoneID, marker: cursor.marker, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    private func runQuery(_ query: Query, zoneID: RecordZone.ID?, marker: String?, desiredKeys: [String]?,
                          resultsLimit: Int) async throws(TandemError) -> QueryResults {
        var body: JSONObject = ["query": query.json, "resultsLimit": .int(Int64(max(1, min(resultsLimit, 200))))]
        if let zoneID { body["zoneID"] = RecordCodec.encodeZoneID(zoneID.wire) } else if databaseScope == .private { body["zoneWide"] = true }
        if let marker { body["continuationMarker"] = .string(marker) }
        if let desiredKeys { body["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
        let json = try await post("records/query", body)
        var matches: [(Record.ID, Result<Record, TandemError>)] = []
        for item in try [JSONValue].items(json, "records", in: "records/query") {
            do throws(TandemError) {
                let record = try Record(json: item, scope: databaseScope)
                matches.append((record.recordID, .success(record)))
            } catch {
                let name = item["recordName"]?.stringValue ?? ""
                matches.append((Record.ID(recordName: name, zoneID: zoneID ?? .default), .failure(itemError(item) ?? error)))
            }
        }
        let cursor = json["continuationMarker"]?.stringValue.map { Query.Cursor(query: query, zoneID: zoneID, marker: $0) }
        return (matches, cursor)
    }
}
