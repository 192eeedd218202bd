import Foundation
import TandemTestSupport

/// The bus figures' servers (issue 20; decisions N12, N42): `nodes` `tandem serve` processes on
/// one PostgreSQL database with `--bus` to a nats-server on loopback, and `single`, one more
/// node on the same database without `--bus`: the single-node baseline, measured while the
/// others idle. Every node shares the first one's `secret.key` and has the group session limits
/// raised as the sessions figure has them, so rate limits do not cap the fan-out.
final class BusCluster {
    let nats: NATSServer
    let nodes: [ServerProcess]
    let single: ServerProcess
    let account: BenchAccount
    /// The conversations' other member (an email).
    static let member = "member@example.com"
    var member: String { Self.member }
    private let directories: [String]

    static let serverArguments = ["--session-rate", "1000000", "--session-burst", "1000000", "--stream-queue", "65536", "--pool-size", "4"]

    init(nodes count: Int) throws {
        let nats = try NATSServer()
        self.nats = nats
        let store = try BenchPostgres.database()
        let directories = try (0...count).map { try BenchPaths.temporaryDirectory("bus-\($0)") }
        self.directories = directories
        account = try BenchAccount.prepare(postgresURL: store, directory: directories[0])
        try BusFigure.addMember(Self.member, postgresURL: store, directory: directories[0])
        var started: [ServerProcess] = []
        for (index, directory) in directories.enumerated() {
            if index > 0 {
                try FileManager.default.copyItem(atPath: directories[0] + "/secret.key", toPath: directory + "/secret.key")
            }
            let node = ServerProcess(dataDirectory: directory, postgresURL: store)
            node.extraArguments = Self.serverArguments + (index < count ? ["--bus", nats.url] : [])
            try node.start()
            started.append(node)
        }
        nodes = Array(started.prefix(count))
        single = started[count]
    }

    /// CPU seconds used so far by `servers` and, with `nats`, by nats-server too.
    func cpuSeconds(_ servers: [ServerProcess], nats withNATS: Bool) -> Double {
        servers.map { $0.cpuSeconds() }.reduce(0, +) + (withNATS ? nats.processIdentifier.map(ProcessCPU.seconds(pid:)) ?? 0 : 0)
    }

    func stop() {
        (nodes + [single]).forEach { $0.stop() }
        try? nats.stop()
        directories.forEach(BenchPaths.remove)
    }
}
