import Foundation
import TandemCore
import TandemSQLite

/// Issue 14 item 6: `records/query` paging is keyset paging, so a page deep in a result costs
/// what the first one does. On the query figure's zone (1,000,000 Item records; 100,000 with
/// `--quick`) a real `tandem serve` is paged with the default order and `resultsLimit` 200
/// from page 1 to page 2,000 (records 399,801–400,000; the last page with a successor in the
/// quick zone), then page 1 and the deep page are each asked again `repeats` times with their
/// markers and timed. Beside them, as the ceiling of the old design, the same deep page read
/// with `LIMIT 200 OFFSET n` straight from SQLite: what an offset marker made every request pay.
enum DeepPagingFigure {
    static let resultsLimit = 200
    static let deepPage = 2000
    static let repeats = 30

    struct Result {
        var records: Int
        var page: Int
        var first: [Double]
        var deep: [Double]
        var walkSeconds: Double
        var offsetSeconds: Double
    }

    static func run(options: BenchOptions, report: Report) throws -> Result {
        let count = options.queryZoneRecords
        report.section("records/query deep paging on a zone of \(Format.count(count)) records")
        let zone = try QueryZone.prepare(records: count) { report.say($0) }
        let account = try BenchAccount.prepare(in: zone.directory)
        let server = ServerProcess(dataDirectory: zone.directory, synchronous: .normal)
        try server.start()
        defer { server.stop() }
        let http = BenchHTTP()
        let url = server.url + BenchAccount.databasePath + "/records/query"
        let page = min(deepPage, count / resultsLimit - 1)

        func ask(_ marker: String?) throws -> (seconds: Double, marker: String?, first: String?) {
            var body: JSONObject = ["zoneID": ["zoneName": .string(QueryZone.zoneName)], "resultsLimit": .int(Int64(resultsLimit)),
                                    "query": ["recordType": .string(QueryZone.recordType)]]
            if let marker { body["continuationMarker"] = .string(marker) }
            let bytes = JSONWriter.bytes(.object(body))
            let clock = ContinuousClock()
            let start = clock.now
            let (status, data) = try http.post(url, token: account.token, body: bytes)
            let seconds = (clock.now - start) / .seconds(1)
            guard status == 200, let json = try? JSONParser.parse([UInt8](data)) else {
                throw BenchError("records/query answered \(status): \(String(decoding: data.prefix(400), as: UTF8.self))")
            }
            let records = json["records"]?.arrayValue ?? []
            guard records.count == resultsLimit else { throw BenchError("a page held \(records.count) records, expected \(resultsLimit)") }
            return (seconds, json["continuationMarker"]?.stringValue, records.first?["recordName"]?.stringValue)
        }

        // Walk to the deep page, keeping the marker that leads to it.
        let walkStart = ContinuousClock.now
        var marker: String?
        for _ in 1..<page {
            marker = try ask(marker).marker
            guard marker != nil else { throw BenchError("the result ended before page \(page)") }
        }
        let walkSeconds = (ContinuousClock.now - walkStart) / .seconds(1)
        let deepMarker = marker
        let expected = "item-\((page - 1) * resultsLimit)"
        let sample = try ask(deepMarker)
        guard sample.first == expected else { throw BenchError("page \(page) began with \(sample.first ?? "nothing"), expected \(expected)") }

        var first: [Double] = []
        var deep: [Double] = []
        for _ in 0..<repeats {
            first.append(try ask(nil).seconds)
            deep.append(try ask(deepMarker).seconds)
        }
        first.sort()
        deep.sort()

        // The old design's cost of the same page: OFFSET in SQLite itself, no HTTP or encoding.
        let connection = try SQLiteConnection(path: zone.directory + "/tandem.sqlite", readOnly: true)
        defer { connection.close() }
        let zoneKey = try connection.queryOne("SELECT id FROM zones WHERE name = ?", [.text(QueryZone.zoneName)]) { $0.int64(0) } ?? 0
        var offsetRuns: [Double] = []
        for _ in 0..<5 {
            let start = ContinuousClock.now
            _ = try connection.query("SELECT name, fields FROM records WHERE zone_id = ? AND type = ? ORDER BY id LIMIT ? OFFSET ?",
                                     [.integer(zoneKey), .text(QueryZone.recordType), .integer(Int64(resultsLimit)),
                                      .integer(Int64((page - 1) * resultsLimit))]) { $0.text(0) }
            offsetRuns.append((ContinuousClock.now - start) / .seconds(1))
        }
        offsetRuns.sort()

        report.say("  walked pages 1–\(Format.count(page - 1)) in \(Format.seconds(walkSeconds)) "
                   + "(\(Format.latency(walkSeconds / Double(max(1, page - 1)))) a page); page \(Format.count(page)) begins at \(expected)")
        report.say("  page 1 p50 \(Format.latency(first[repeats / 2])), page \(Format.count(page)) p50 \(Format.latency(deep[repeats / 2])) "
                   + "(\(repeats) requests each); OFFSET \(Format.count((page - 1) * resultsLimit)) in SQLite alone: \(Format.latency(offsetRuns[2]))")
        return Result(records: count, page: page, first: first, deep: deep, walkSeconds: walkSeconds, offsetSeconds: offsetRuns[2])
    }

    /// Rows: the deep page against page 1 (target: within 1.5×), and the offset read for contrast.
    static func rows(_ result: Result, report: Report) {
        let zone = result.records >= 1_000_000 ? "\(result.records / 1_000_000)M" : "\(result.records / 1000)k"
        let first = result.first[result.first.count / 2], deep = result.deep[result.deep.count / 2]
        report.add("query page \(Format.count(result.page)) p50, \(zone) zone (keyset)", value: Format.latency(deep),
                   ceiling: Format.latency(first) + " (page 1)", ratio: String(format: "%.2f×", deep / first),
                   target: "< 1.5×", verdict: .init(passes: deep < first * 1.5))
        report.add("same page by OFFSET, SQLite alone (old design)", value: Format.latency(result.offsetSeconds),
                   ceiling: Format.latency(first) + " (page 1)", ratio: String(format: "%.1f×", result.offsetSeconds / first),
                   verdict: .info)
    }
}
