import Foundation
import TandemPostgres

/// Ceiling (c): raw libpq single-row INSERTs of two text fields, one transaction each, on one
/// connection to a fresh database of the bench's cluster (`synchronous_commit` and `fsync` on):
/// the commit rate the cluster's disk allows, which the PostgreSQL creates figure is divided by
/// (decisions P19, P45). Each commit waits for a WAL flush, so on a shared disk it moves a lot
/// between runs; hence it is measured in the same run as the figure.
///
/// Unlike ceiling (b) it carries its own SQL: it measures the database, not the store.
enum PostgresInsertCeiling {
    struct Result {
        var records: Int
        var seconds: Double
        /// CPU seconds the bench process used meanwhile (libpq's side only; the server's backend
        /// is another process).
        var cpuSeconds: Double
        var recordsPerSecond: Double { Double(records) / seconds }
    }

    /// Runs the loop for `seconds` on `url` (an empty database) and checks that every
    /// acknowledged insert is there.
    /// - Throws: ``PostgresError``; `BenchError` when the server is not durable as configured or
    ///   a row is missing.
    static func measure(url: String, seconds: Double) throws -> Result {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        try connection.execute("CREATE TABLE item (id bigserial PRIMARY KEY, name text NOT NULL, body text NOT NULL)")
        for setting in ["synchronous_commit", "fsync"] {
            let value = try connection.queryOne("SHOW \(setting)") { try $0.string(0) }
            guard value == "on" else { throw BenchError("the bench cluster runs with \(setting) = \(value ?? "?"), not on") }
        }
        let clock = ContinuousClock()
        let cpuStart = ProcessCPU.ownProcess
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var inserted = 0
        while clock.now < deadline {
            try connection.transaction {
                _ = try $0.run("INSERT INTO item (name, body) VALUES ($1, $2)",
                               [.text("record-\(inserted)"), .text("a body of some forty bytes, give or take")])
            }
            inserted += 1
        }
        let elapsed = (clock.now - start) / .seconds(1)
        let cpu = ProcessCPU.ownProcess - cpuStart
        let stored = try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } ?? 0
        guard inserted > 0, stored == Int64(inserted) else {
            throw BenchError("the raw insert loop committed \(inserted) rows but the table holds \(stored)")
        }
        return Result(records: inserted, seconds: elapsed, cpuSeconds: cpu)
    }
}
