import Foundation
import TandemPostgres
import TandemTestSupport

/// The bench's PostgreSQL: one throwaway cluster per run (`PostgresCluster` from the test
/// support, decisions P15: Debian's server as `nobody` in a folder under /tmp, loopback and
/// trust only, `fsync` and `synchronous_commit` on), started when a PostgreSQL figure first
/// needs it and stopped and removed at exit. Each figure gets a fresh database.
///
/// `TANDEM_BENCH_POSTGRES_URL=postgres://USER@HOST:PORT/DB` measures on a server of one's own
/// instead: each figure's database is made there with `CREATE DATABASE bench_…` (and left).
enum BenchPostgres {
    /// A fresh, empty database: its `postgres://` URL.
    /// - Throws: when PostgreSQL is not installed (`scripts/bootstrap --test` installs it) or
    ///   the cluster does not start.
    static func database() throws -> String {
        let name = "bench_" + UUID().uuidString.prefix(8).lowercased()
        if let server = ProcessInfo.processInfo.environment["TANDEM_BENCH_POSTGRES_URL"], !server.isEmpty {
            let connection = try PostgresConnection(url: server)
            defer { connection.close() }
            try connection.execute("CREATE DATABASE \(name)")
            guard let slash = server.range(of: "/", options: .backwards), slash.lowerBound > server.index(server.startIndex, offsetBy: 10) else {
                throw BenchError("TANDEM_BENCH_POSTGRES_URL must name a database: postgres://USER@HOST:PORT/DB")
            }
            return String(server[..<slash.upperBound]) + name
        }
        do {
            return try PostgresCluster.shared().createDatabase(name)
        } catch {
            throw BenchError("no PostgreSQL cluster for the bench (scripts/bootstrap --test installs postgresql): \(error)")
        }
    }
}
