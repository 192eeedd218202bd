import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Issue 14 item 12: a full disk answered `500 INTERNAL_ERROR "see the server log"`.
///
/// The disk is made full with the server's database cap (`--max-database-mib`, SQLite's
/// `max_page_count`): SQLite then fails the write with `SQLITE_FULL`, the very code it returns
/// for `ENOSPC`, through the same writer, rollback and error path. A real small filesystem
/// (tmpfs or a loop device) would need root and mount rights the test run does not have, and
/// filling the machine's disk is not an option.
@Suite struct DiskFullTests {
    static let bigText = String(repeating: "x", count: 100_000)

    @Test func aFullDiskRefusesWritesRetryablyLogsOnceAndKeepsServingReads() throws {
        let server = try TestServer(extraArguments: ["--max-database-mib", "1", "--quiet"])
        let zone = try server.makeZone("full")
        var saved: [String] = []
        var refusal: TestServer.Response?
        for i in 0..<40 {
            let response = try server.post("records/modify", Body.modify([Body.operation("create", name: "big\(i)", fields: ["text": Body.field(.string(Self.bigText))])], zone: zone))
            if response.status != 200 || response.json.records.first?.serverErrorCode != nil {
                refusal = response
                break
            }
            saved.append("big\(i)")
        }
        let full = try #require(refusal, "the 1 MiB cap was never reached")
        #expect(!saved.isEmpty)
        #expect(full.status == 503, "\(full.status) \(full.text)")
        #expect(full.json.serverErrorCode == "TRY_AGAIN_LATER")
        #expect(full.json["retryAfter"]?.int64Value == 30)
        #expect(full.json["reason"]?.stringValue?.contains("disk is full") == true, "\(full.text)")
        #expect(full.headers["retry-after"] ?? full.headers["Retry-After"] == "30")
        for i in 0..<4 {
            let again = try server.post("records/modify", Body.modify([Body.operation("create", name: "more\(i)", fields: ["text": Body.field(.string(Self.bigText))])], zone: zone))
            #expect(again.status == 503)
        }

        // Reads keep serving.
        let lookup = try server.post("records/lookup", ["zoneID": ["zoneName": .string(zone)], "records": [["recordName": .string(saved[0])]]])
        #expect(lookup.status == 200)
        #expect(lookup.json.records.first?["fields"]?["text"]?["value"]?.stringValue == Self.bigText)
        let query = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "query": ["recordType": "Note"], "desiredKeys": []])
        #expect(query.status == 200)
        #expect(query.json.records.count == saved.count, "nothing of the refused writes was kept")

        // One report for five refusals.
        let log = server.standardError?.value ?? ""
        #expect(log.components(separatedBy: "disk full:").count - 1 == 1, "\(log)")
        #expect(!log.contains("internal error"))

        // Space comes back (records deleted free their pages): writes resume, no restart.
        let deletions = saved.map { JSONValue.object(["operationType": "forceDelete", "record": ["recordName": .string($0)]]) }
        let deleted = try server.post("records/modify", Body.modify(deletions, zone: zone))
        #expect(deleted.status == 200, "\(deleted.text.prefix(300))")
        let resumed = try server.post("records/modify", Body.modify([Body.operation("create", name: "after", fields: ["text": Body.field(.string(Self.bigText))])], zone: zone))
        #expect(resumed.status == 200, "\(resumed.text.prefix(300))")
        #expect(resumed.json.records.first?["recordChangeTag"] != nil)
    }
}
