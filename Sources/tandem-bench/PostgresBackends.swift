import Foundation
import TandemPostgres

/// The PostgreSQL backends serving one database: the server's pooled connections, found in
/// `pg_stat_activity` once they are open (after a warm-up), and their CPU seconds read from
/// /proc. A lookup's cost is the server's CPU plus these backends' plus wrk's: on a machine
/// whose cores all three share, their sum bounds the rate (decisions P77).
struct PostgresBackends {
    let processes: [Int32]

    /// The backends connected to the database of `url` now, this query's own excluded.
    /// `nil` when the cluster is not on this machine (a backend's /proc entry is missing).
    init?(url: String) throws {
        guard let slash = url.range(of: "/", options: .backwards) else { return nil }
        let database = String(url[slash.upperBound...].prefix { $0 != "?" })
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        processes = try connection.query("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                                         [.text(database)]) { Int32(try $0.int64(0)) }
        guard !processes.isEmpty, processes.allSatisfy({ FileManager.default.fileExists(atPath: "/proc/\($0)/stat") }) else { return nil }
    }

    /// CPU seconds the backends have used so far (a backend gone since counts 0 from then on).
    func cpuSeconds() -> Double {
        processes.reduce(0) { $0 + ProcessCPU.seconds(pid: $1) }
    }
}
