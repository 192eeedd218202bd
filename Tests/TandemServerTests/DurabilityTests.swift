import Foundation
import Testing
import TandemCore
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// A server killed with SIGKILL loses no acknowledged write and leaves an intact database; a
/// server stopped with SIGTERM finishes and exits cleanly.
@Suite(.serialized, .sqliteOnly("SQLite itself: its WAL and --synchronous")) struct DurabilityTests {
    @Test func acknowledgedWritesSurviveSIGKILL() throws {
        let server = try TestServer()
        let acknowledged = AcknowledgedNames()
        let writer = Thread {
            var i = 0
            while true {
                let name = "durable-\(i)"
                let body = Body.modify([Body.operation("create", name: name, fields: ["i": Body.field(.int(Int64(i))), "text": Body.field(.string(String(repeating: "é", count: i % 50)))])])
                guard let response = try? server.post("records/modify", body), response.status == 200,
                      response.json.record(0)["recordChangeTag"] != nil else { break }
                acknowledged.add(i)
                i += 1
            }
            acknowledged.finish()
        }
        writer.start()
        while acknowledged.count < 150 { usleep(10_000) }
        server.kill()
        acknowledged.waitUntilFinished()
        let saved = acknowledged.all
        #expect(saved.count >= 150)

        // The file is intact before the server touches it again.
        let store = try SQLiteStore(directory: server.dataDirectory)
        #expect(try store.database.integrityCheck() == ["ok"])
        store.close()

        try server.start()
        for chunk in stride(from: 0, to: saved.count, by: 200) {
            let names = saved[chunk..<min(chunk + 200, saved.count)].map { "durable-\($0)" }
            let lookup = try server.post("records/lookup", Body.lookup(names))
            for (offset, record) in lookup.json.records.enumerated() {
                let i = saved[chunk + offset]
                #expect(record["fields"]?["i"]?["value"]?.int64Value == Int64(i), "record \(i) lost")
                #expect(record["fields"]?["text"]?["value"]?.stringValue == String(repeating: "é", count: i % 50))
            }
        }
        #expect(server.stop() == 0)
    }

    @Test func sigtermStopsCleanlyAndDataRemains() throws {
        let server = try TestServer()
        try server.create("kept", fields: ["v": Body.field(1)])
        #expect(server.stop() == 0)
        // A clean stop checkpoints the WAL into the main file.
        let wal = server.dataDirectory + "/tandem.sqlite-wal"
        let walSize = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(walSize == 0)
        try server.start()
        let lookup = try server.post("records/lookup", Body.lookup(["kept"]))
        #expect(lookup.json.record(0)["fields"]?["v"]?["value"]?.int64Value == 1)
    }
}

/// The record numbers a writer saw acknowledged.
final class AcknowledgedNames: @unchecked Sendable {
    private let condition = NSCondition()
    private var numbers: [Int] = []
    private var finished = false

    func add(_ n: Int) { condition.lock(); numbers.append(n); condition.unlock() }
    var count: Int { condition.lock(); defer { condition.unlock() }; return numbers.count }
    var all: [Int] { condition.lock(); defer { condition.unlock() }; return numbers }
    func finish() { condition.lock(); finished = true; condition.broadcast(); condition.unlock() }
    func waitUntilFinished() { condition.lock(); while !finished { condition.wait() }; condition.unlock() }
}
