import Foundation
import Synchronization
import Testing
import TandemPostgres
import TandemTestSupport

/// The server going away under a pool: a kill -9 and a restart during writes. Each test starts
/// a cluster of its own, so that the shared one stays up for the other suites.
@Suite(.serialized) struct PostgresRestartTests {
    /// While the server is down every checkout fails at once with `.unavailable` (no hang);
    /// after it is back the pool reconnects by itself and everything committed is there.
    @Test func killedServerIsUnavailableThenPoolReconnects() throws {
        let cluster = try PostgresCluster()
        let pool = PostgresPool(url: try cluster.createDatabase(), size: 2, checkoutTimeout: .seconds(5))
        try pool.transaction { try $0.execute("CREATE TABLE item (n bigint PRIMARY KEY)") }
        for n in 1...3 { try pool.withConnection { try $0.run("INSERT INTO item VALUES ($1)", [.integer(Int64(n))]) } }
        #expect(pool.idleCount == 1)

        try cluster.kill9()
        for _ in 0..<3 {
            let started = ContinuousClock.now
            do {
                try pool.withConnection { try $0.run("INSERT INTO item VALUES (99)") }
                Issue.record("a write succeeded while the server was down")
            } catch let error as PostgresError {
                #expect(error.kind == .unavailable, "\(error)")
            }
            // Refused connections fail at once; the bound is the connect timeout, well under the test's patience.
            #expect(ContinuousClock.now - started < .seconds(10))
        }

        try cluster.start()
        try pool.healthCheck()
        let rows = try pool.withConnection { try $0.query("SELECT n FROM item ORDER BY n") { try $0.int64(0) } }
        #expect(rows == [1, 2, 3])
    }

    /// Writers run through a restart: each insert is acknowledged or fails `.unavailable`, and
    /// every acknowledged row is there afterwards.
    @Test func restartDuringWritesLosesNothingAcknowledged() throws {
        let cluster = try PostgresCluster()
        let pool = PostgresPool(url: try cluster.createDatabase(), size: 4, checkoutTimeout: .seconds(5))
        try pool.withConnection { try $0.execute("CREATE TABLE item (writer bigint, n bigint, PRIMARY KEY (writer, n))") }

        let acknowledged = Mutex<Set<[Int64]>>([])
        let failures = Mutex<[PostgresError]>([])
        let unexpected = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let writers = 4
        let group = DispatchGroup()
        for writer in 0..<writers {
            group.enter()
            Thread {
                defer { group.leave() }
                var n: Int64 = 0
                while !stop.load(ordering: .relaxed) {
                    n += 1
                    do {
                        try pool.transaction { try $0.run("INSERT INTO item VALUES ($1, $2)", [.integer(Int64(writer)), .integer(n)]) }
                        acknowledged.withLock { _ = $0.insert([Int64(writer), n]) }
                    } catch let error as PostgresError {
                        failures.withLock { $0.append(error) }
                        usleep(20_000)
                    } catch {
                        unexpected.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        // Writes before, during and after the restart.
        let before = Date(timeIntervalSinceNow: 30)
        while acknowledged.withLock({ $0.count }) < 50 && Date() < before { usleep(10_000) }
        try cluster.restart()
        let countAtRestart = acknowledged.withLock { $0.count }
        let after = Date(timeIntervalSinceNow: 30)
        while acknowledged.withLock({ $0.count }) < countAtRestart + 50 && Date() < after { usleep(10_000) }
        stop.store(true, ordering: .relaxed)
        group.wait()

        #expect(unexpected.withLock { $0 } == [])
        for error in failures.withLock({ $0 }) { #expect(error.kind == .unavailable, "\(error)") }
        #expect(acknowledged.withLock { $0.count } >= countAtRestart + 50, "the pool did not reconnect after the restart")
        let stored = try pool.withConnection { try $0.query("SELECT writer, n FROM item") { [try $0.int64(0), try $0.int64(1)] } }
        let missing = acknowledged.withLock { $0 }.subtracting(stored)
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.sorted { $0.lexicographicallyPrecedes($1) }.prefix(10))")
    }
}
