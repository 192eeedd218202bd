/// The wrk scripts of each benchmark. Every request is one CloudKit Web Services call with one
/// record (or one query); the ceiling's requests have the same size and headers.
enum BenchScripts {
    /// `records/modify` creating one new `Note` per request; `tag` keeps names unique across runs.
    static func create(tag: String, headers: [(String, String)]) -> WrkScript {
        WrkScript(path: BenchAccount.databasePath + "/records/modify", headers: headers,
                  bodyFormat: createBody(recordName: "\(tag)-%d-%d"), formatArguments: ["id", "n"],
                  expect: "recordChangeTag")
    }

    static func createBody(recordName: String) -> String {
        #"{"operations":[{"operationType":"create","record":{"recordType":"Note","recordName":"\#(recordName)","#
            + #""fields":{"title":{"value":"Bench note"},"stars":{"value":5}}}}]}"#
    }

    /// Records `lookup-0` ... `lookup-(lookupRecords - 1)` that the lookup benchmark reads.
    static let lookupRecords = 100

    /// `records/lookup` of one existing record per request.
    static func lookup(headers: [(String, String)]) -> WrkScript {
        WrkScript(path: BenchAccount.databasePath + "/records/lookup", headers: headers,
                  bodyFormat: lookupBody(recordName: "lookup-%d"), formatArguments: ["(id * 31 + n) % \(lookupRecords)"],
                  expect: "recordChangeTag")
    }

    static func lookupBody(recordName: String) -> String {
        #"{"records":[{"recordName":"\#(recordName)"}]}"#
    }

    /// `records/query` with one EQUALS filter on `bucket`, a different bucket each request.
    static func query(headers: [(String, String)], resultsLimit: Int) -> WrkScript {
        WrkScript(path: BenchAccount.databasePath + "/records/query", headers: headers,
                  bodyFormat: queryBody(bucket: "%d", resultsLimit: resultsLimit),
                  formatArguments: ["(id * 7919 + n * 37) % \(QueryZone.buckets)"], expect: "recordChangeTag")
    }

    static func queryBody(bucket: String, resultsLimit: Int) -> String {
        #"{"zoneID":{"zoneName":"\#(QueryZone.zoneName)"},"resultsLimit":\#(resultsLimit),"#
            + #""query":{"recordType":"\#(QueryZone.recordType)","filterBy":[{"comparator":"EQUALS","fieldName":"bucket","#
            + #""fieldValue":{"value":\#(bucket)}}]}}"#
    }

    /// The ceiling's request: the create request's size and headers, to a server that ignores them.
    static func hello() -> WrkScript {
        let token = "tdu_" + String(repeating: "x", count: 43)
        return WrkScript(path: BenchAccount.databasePath + "/records/modify",
                         headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                         bodyFormat: createBody(recordName: "hello-%d-%d"), formatArguments: ["id", "n"],
                         expect: #""ok""#)
    }
}
