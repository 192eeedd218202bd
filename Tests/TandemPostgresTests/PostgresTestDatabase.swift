import Foundation
import TandemPostgres
import TandemTestSupport

/// A fresh database on the test process's shared cluster, and a connection to it.
func freshDatabase() throws -> String {
    try PostgresCluster.shared().createDatabase()
}

func connect(_ url: String, statementTimeout: Duration? = .seconds(30)) throws -> PostgresConnection {
    try PostgresConnection(url: url, statementTimeout: statementTimeout)
}

/// The server process id behind a connection.
func backendPID(_ connection: PostgresConnection) throws -> Int64 {
    try connection.queryOne("SELECT pg_backend_pid()") { try $0.int64(0) } ?? 0
}

/// Runs `body` on `count` threads of their own at once, and returns when all have finished
/// (Dispatch's concurrentPerform would use one thread per core).
func concurrently(_ count: Int, _ body: @escaping @Sendable () -> Void) {
    let group = DispatchGroup()
    for _ in 0..<count {
        group.enter()
        Thread { body(); group.leave() }.start()
    }
    group.wait()
}
