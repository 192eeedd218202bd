import Foundation
import TandemCore
import TandemTestSupport

/// Several `tandem serve` nodes on one PostgreSQL database and one nats-server (`--bus`), and
/// optionally nginx in front of them: the cluster of issue 20's scenario tests (decisions N11,
/// N13). Real peers: the test process's shared PostgreSQL cluster (a new database), a
/// nats-server of its own (``NATSServer``), nginx (``NginxBalancer``).
///
/// As docs/deployment.md asks of a deployment, every node has its own `--data`, holding the same
/// `secret.key` (copied from the first node's) and the first node's `assets/`, `avatars/` and
/// `journal/` (symbolic links: one shared mount; the journal since N36).
final class NodeCluster {
    let nats: NATSServer
    /// The shared database's URL.
    let store: String
    /// The nodes, started in order (node 0 made the container).
    let nodes: [TestServer]
    /// nginx, round-robin over the nodes, when asked for.
    let balancer: NginxBalancer?
    /// A client's view of the cluster through nginx (its requests and streams go to nginx's
    /// port); nil without a balancer.
    let front: TestServer?
    /// The arguments every node was started with.
    let arguments: [String]

    /// The folders of the shared mount (docs/deployment.md).
    static let sharedFolders = ["assets", "avatars", "journal"]

    var a: TestServer { nodes[0] }
    var b: TestServer { nodes[1] }
    var c: TestServer { nodes[2] }

    /// - Parameters: `count` nodes; `balancer`: start nginx in front of them; `extraArguments`
    ///   for every node's `tandem serve`; `natsArguments` for nats-server; `bus` makes each
    ///   node's `--bus` URL from the NATS server (default: its `url`); `nodeBus`: another `--bus`
    ///   for the nodes it names by index (a nats-server of the test's own, routed to this one).
    init(nodes count: Int, balancer: Bool = false, extraArguments: [String] = [], natsArguments: [String] = [],
         bus: ((NATSServer) -> String)? = nil, nodeBus: [Int: String] = [:]) throws {
        nats = try NATSServer(arguments: natsArguments)
        store = try PostgresCluster.shared().createDatabase()
        arguments = ["--store", store, "--bus", bus?(nats) ?? nats.url, "--pool-size", "4", "--quiet"] + extraArguments
        let first = try ExitCleanup.temporaryDirectory("tandem-node")
        try TandemProcess.admin(["container", "create", TestServer.container, "--data", first, "--store", store])
        for shared in Self.sharedFolders {
            try FileManager.default.createDirectory(atPath: first + "/" + shared, withIntermediateDirectories: true)
        }
        let common = arguments
        func nodeArguments(_ node: Int) -> [String] {
            guard let url = nodeBus[node] else { return common }
            return ["--store", common[1], "--bus", url] + common.dropFirst(4)
        }
        var started = [try TestServer(extraArguments: nodeArguments(0), dataDirectory: first)]
        for node in 1..<count {
            let data = try ExitCleanup.temporaryDirectory("tandem-node")
            // Nodes share the secret key (change tokens, asset URLs, share links) and the file mounts.
            try FileManager.default.copyItem(atPath: first + "/secret.key", toPath: data + "/secret.key")
            for shared in Self.sharedFolders {
                try FileManager.default.createSymbolicLink(atPath: data + "/" + shared, withDestinationPath: first + "/" + shared)
            }
            started.append(try TestServer(extraArguments: nodeArguments(node), dataDirectory: data))
        }
        nodes = started
        if balancer {
            let nginx = try NginxBalancer(upstreams: started.map(\.port))
            self.balancer = nginx
            front = try TestServer(reaching: nginx.port)
        } else {
            self.balancer = nil
            front = nil
        }
    }

    /// One more node on the same database, bus and shared files, started now; not in `nodes`
    /// and not behind the balancer (the caller keeps it).
    func startNode() throws -> TestServer {
        let data = try ExitCleanup.temporaryDirectory("tandem-node")
        try FileManager.default.copyItem(atPath: a.dataDirectory + "/secret.key", toPath: data + "/secret.key")
        for shared in Self.sharedFolders {
            try FileManager.default.createSymbolicLink(atPath: data + "/" + shared, withDestinationPath: a.dataDirectory + "/" + shared)
        }
        return try TestServer(extraArguments: arguments, dataDirectory: data)
    }

    /// A new user with a token, made through node 0's data directory and the shared store.
    func person(_ name: String) throws -> Person {
        let email = "\(unique(name).lowercased())@example.com"
        let recordName = try TandemProcess.admin(["user", "add", "--email", email, "--name", name, "--data", a.dataDirectory, "--store", store])
        let token = try TandemProcess.admin(["token", "create", "--user", email, "--data", a.dataDirectory, "--store", store])
        return Person(recordName: recordName, email: email, token: token)
    }

    /// Saves a Note named `name` in `person`'s default zone (or `zone`) through `node`.
    func save(_ name: String, on node: TestServer, as person: Person, zone: String? = nil) throws {
        let operations = [Body.operation("create", name: name, fields: ["title": Body.field("x")])]
        let response = try node.post("records/modify", Body.modify(operations, zone: zone), as: person, database: "private")
        guard response.status == 200, response.json.record(0).serverErrorCode == nil else { throw TestFailure("save: \(response.text)") }
    }

    /// A counter's or gauge's value in `node`'s `/metrics` (0 when absent or unreachable).
    static func counter(_ name: String, on node: TestServer) -> Int {
        guard let response = try? node.request("GET", node.baseURL + "/metrics", token: .some(nil)) else { return 0 }
        for line in response.text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(line.split(separator: " ").last ?? "") ?? 0
        }
        return 0
    }
}
