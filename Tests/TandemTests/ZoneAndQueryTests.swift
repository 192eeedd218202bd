import Foundation
import Testing
import Tandem

@Suite("Zones and queries")
struct ZoneAndQueryTests {
    let server = TestServer.shared

    @Test func zonesAreCreatedListedFetchedAndDeleted() async throws {
        let db = server.ada.privateDatabase
        let id = RecordZone.ID(zoneName: unique("zone"))
        let saved = try await db.save(RecordZone(zoneID: id))
        #expect(saved.zoneID == id)
        #expect(try await db.allRecordZones().contains { $0.zoneID == id })
        #expect(try await db.recordZone(for: id).zoneID == id)
        try await db.deleteRecordZone(withID: id)
        let error = await #expect(throws: TandemError.self) { try await db.recordZone(for: id) }
        #expect(error?.code == .zoneNotFound)
        let saveError = await #expect(throws: TandemError.self) {
            try await db.save(Record(recordType: "Note", recordID: Record.ID(zoneID: id)))
        }
        #expect(saveError?.code == .zoneNotFound)
    }

    @Test func queryPagesThroughResultsWithCursor() async throws {
        let db = server.ada.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: unique("query")))
        var records: [Record] = []
        for n in 1...5 {
            var record = Record(recordType: "Score", recordID: Record.ID(recordName: "score-\(n)", zoneID: zone.zoneID))
            record["points"] = n * 10
            record["label"] = "n\(n)"
            records.append(record)
        }
        var odd = Record(recordType: "Score", recordID: Record.ID(recordName: "low", zoneID: zone.zoneID))
        odd["points"] = 1
        records.append(odd)
        #expect(try await db.modifyRecords(saving: records, deleting: []).partialFailure == nil)

        let query = Query(recordType: "Score", filters: [.greaterThanOrEquals("points", 10)], sort: [.descending("points")])
        var page = try await db.records(matching: query, inZoneWith: zone.zoneID, resultsLimit: 2)
        var seen = try page.matchResults.map { try $0.1.get()["points"] as? Int64 }
        while let cursor = page.queryCursor {
            page = try await db.records(continuingMatchFrom: cursor, resultsLimit: 2)
            seen += try page.matchResults.map { try $0.1.get()["points"] as? Int64 }
        }
        #expect(seen == [50, 40, 30, 20, 10])

        let named = try await db.records(matching: Query(recordType: "Score", filters: [.in("label", ["n1", "n3"])]),
                                         inZoneWith: zone.zoneID, desiredKeys: ["label"])
        let labels = try named.matchResults.map { try $0.1.get() }
        #expect(Set(labels.compactMap { $0["label"] as? String }) == ["n1", "n3"])
        #expect(labels.allSatisfy { $0["points"] == nil })
    }
}
