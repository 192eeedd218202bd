import Foundation
import Testing
import TandemPostgres
import TandemTestSupport

/// The PostgreSQL ceiling figure for `make bench` (decision P18): single-row INSERTs of two text
/// fields, one transaction each, `synchronous_commit` on and `fsync` on, on one connection to
/// the test cluster, for `TANDEM_PG_CEILING_SECONDS` (default 1; 5 for the quoted figure).
/// It prints inserts per second; what it asserts is only that every acknowledged insert is stored.
@Suite struct PostgresInsertCeilingTests {
    @Test func rawInsertLoopPrintsItsRate() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["TANDEM_PG_CEILING_SECONDS"] ?? "") ?? 1
        let connection = try connect(try freshDatabase())
        try connection.execute("CREATE TABLE item (id bigserial PRIMARY KEY, name text NOT NULL, body text NOT NULL)")
        #expect(try connection.queryOne("SHOW synchronous_commit") { try $0.string(0) } == "on")
        #expect(try connection.queryOne("SHOW fsync") { try $0.string(0) } == "on")
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(Int64(seconds * 1000))
        var inserted = 0
        while ContinuousClock.now < deadline {
            try connection.transaction {
                try $0.run("INSERT INTO item (name, body) VALUES ($1, $2)", [.text("record-\(inserted)"), .text("a body of some forty bytes, give or take")])
            }
            inserted += 1
        }
        let elapsed = ContinuousClock.now - started
        let rate = Double(inserted) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        print("postgres-insert-ceiling: \(inserted) inserts in \(elapsed), \(Int(rate)) inserts/s (one row per transaction, synchronous_commit on)")
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == Int64(inserted))
    }
}
