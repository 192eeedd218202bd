import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// Three `tandem serve` nodes on one PostgreSQL database and one nats-server, with nginx in front
/// (issue 20 items 4–5; decisions N13–N18): a share made on one node, accepted on another and
/// edited on the third reaches the owner's stream; the same through the load balancer; a node
/// killed with SIGKILL loses no acknowledged write and its client resumes from its change token
/// through nginx on another node.
@Suite(.serialized, .disabled(if: TestStore.isPostgres, "starts its own PostgreSQL nodes; once per run is enough"))
struct ClusterScenarioTests {
    /// Owner on A shares a zone with Bob; Bob accepts on B and edits on C; the owner's stream on
    /// A hears the edit (the notification crossed the bus from C).
    @Test func aShareMadeOnAAcceptedOnBAndEditedOnCIsPushedToTheOwnerOnA() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let owner = try cluster.person("owner")
        let bob = try cluster.person("bob")
        let note = try cluster.a.shareNote(owner: owner, participants: [Invite.email(bob, "READ_WRITE")])
        _ = try cluster.a.subscribe(Self.notes(in: note.zone), as: owner)
        let stream = try await StreamProbe.connect(cluster.a, as: owner)
        #expect(await stream.wait(seconds: 20) { $0.hasHello })  // registered with its node's hubs
        #expect(await stream.wait(seconds: 20) { $0.hasHello })

        #expect(try cluster.b.accept(note, as: bob)["participantStatus"] == "ACCEPTED")
        let started = ContinuousClock.now
        let edit = try cluster.c.sharedModify(note, [Body.operation("update", name: "child", recordType: nil, tag: note.childTag,
                                                                    fields: ["title": Body.field("Oat milk")])], as: bob)
        #expect(edit.status == 200 && edit.json.record(0).serverErrorCode == nil, "\(edit.text)")
        #expect(await stream.wait(seconds: 20) { $0.notifications.contains { $0["recordName"] == "child" } }, "\(stream.envelopes.withLock { $0 })")
        print("cluster: edit on node C to the owner's stream on node A: \(started.duration(to: .now)) (from the edit's request, debug build, loopback)")
        // Matched on C (the writing node), delivered by A: C sent it, A heard it.
        #expect(NodeCluster.counter("tandem_bus_published_total", on: cluster.c) >= 1)
        #expect(NodeCluster.counter("tandem_bus_received_total", on: cluster.a) >= 1)
        #expect(try cluster.b.request("GET", cluster.b.baseURL + "/healthz", token: .some(nil)).json["bus"]?["state"] == "connected")
    }

    /// The same through nginx: every request and the owner's stream go to the balancer, which
    /// spreads them over the nodes (its access log shows more than one node answered).
    @Test func theSameThroughNginxWithRequestsSpreadOverTheNodes() async throws {
        let cluster = try NodeCluster(nodes: 3, balancer: true)
        let front = try #require(cluster.front)
        let owner = try cluster.person("owner")
        let bob = try cluster.person("bob")
        let note = try front.shareNote(owner: owner, participants: [Invite.email(bob, "READ_WRITE")])
        _ = try front.subscribe(Self.notes(in: note.zone), as: owner)
        let stream = try await StreamProbe.connect(front, as: owner)
        #expect(await stream.wait(seconds: 20) { $0.hasHello })  // registered with its node's hubs
        #expect(await stream.wait(seconds: 20) { $0.hasHello }, "the stream WebSocket upgrades through nginx")

        #expect(try front.accept(note, as: bob)["participantStatus"] == "ACCEPTED")
        var tag = note.childTag
        for n in 0..<6 {
            let edit = try front.sharedModify(note, [Body.operation("update", name: "child", recordType: nil, tag: tag,
                                                                    fields: ["title": Body.field(.string("milk \(n)"))])], as: bob)
            #expect(edit.status == 200 && edit.json.record(0).serverErrorCode == nil, "\(edit.text)")
            tag = try #require(edit.json.record(0)["recordChangeTag"]?.stringValue)
        }
        #expect(await stream.wait(seconds: 20) { $0.notifications.filter { $0["recordName"] == "child" }.count >= 6 }, "\(stream.notifications)")
        let nodes = Set(try #require(cluster.balancer).upstreamsUsed)
        #expect(nodes.count >= 2, "nginx spread the requests over the nodes: \(nodes)")
    }

    /// Per-address limits behind nginx (N67): with the balancer trusted (`--trusted-proxy`), each
    /// client's failed sign-ins count for its own address, the one nginx appends to
    /// `X-Forwarded-For`, on every node; another client through the same balancer is not locked.
    /// (Every client here is on 127.0.0.1, itself trusted, so the test names its clients with the
    /// header nginx extends, as a chain of proxies would.)
    @Test func perAddressLimitsCountEachClientBehindNginx() throws {
        let cluster = try NodeCluster(nodes: 2, balancer: true,
                                      extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "10,3,60", "--trusted-proxy", "127.0.0.1/32"])
        let front = try #require(cluster.front)
        let app = try TandemProcess.admin(["token", "create", "--api", "--container", TestServer.container,
                                           "--data", cluster.a.dataDirectory, "--store", cluster.store])
        func signIn(through node: TestServer, from client: String) throws -> Int {
            try node.auth("signin", ["email": .string("\(unique("guess"))@example.com"), "password": "a wrong guess", "consent": true],
                          apiToken: app, headers: ["X-Forwarded-For": client]).status
        }
        for _ in 0..<3 { #expect(try signIn(through: front, from: "203.0.113.7") == 401) }
        Thread.sleep(forTimeInterval: 0.5)   // the bus's delay
        #expect(try signIn(through: front, from: "203.0.113.7") == 429)
        #expect(try signIn(through: cluster.b, from: "203.0.113.7") == 429, "node B counts the same client")
        #expect(try signIn(through: front, from: "198.51.100.20") == 401, "another client through the balancer is not locked")
        #expect(try signIn(through: front, from: "198.51.100.20") == 401)
        let nodes = Set(try #require(cluster.balancer).upstreamsUsed)
        #expect(nodes.count >= 2, "nginx spread the attempts over the nodes: \(nodes)")
    }

    /// A request head a node cannot parse (100 query arguments: the node closes the connection
    /// without an answer) fails alone; the nodes stay in nginx's rotation for everyone else
    /// (N74). With `max_fails=1`, nginx retried it on every node and marked them all down for
    /// 10 s.
    @Test func oneUnparsableRequestDoesNotTakeTheClusterOutOfTheBalancer() throws {
        let cluster = try NodeCluster(nodes: 2, balancer: true)
        let front = try #require(cluster.front)
        let query = (0..<100).map { "a=\($0)" }.joined(separator: "&")
        let bad = try front.request("GET", front.baseURL + "/healthz?" + query, token: .some(nil))
        #expect(bad.status != 200, "the node cannot read this head: \(bad.status)")
        for _ in 0..<4 {
            let good = try front.request("GET", front.baseURL + "/healthz", token: .some(nil))
            #expect(good.status == 200, "\(good.status) \(good.text.prefix(200))")
        }
    }

    /// A client on the node that is SIGKILLed: its stream closes, it reconnects through nginx
    /// (to another node), and the changes since its change token hold every write that was
    /// acknowledged (200), before and after the kill.
    @Test func aClientOfAKilledNodeResumesThroughNginxFromItsChangeToken() async throws {
        let cluster = try NodeCluster(nodes: 3, balancer: true)
        let front = try #require(cluster.front)
        let ada = try cluster.person("ada")
        let zone = unique("notes")
        let made = try front.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                  as: ada, database: "private")
        #expect(made.status == 200, "\(made.text)")
        let token = try #require(try Self.changes(in: zone, since: nil, through: front, as: ada).token)
        _ = try front.subscribe(Self.notes(in: zone), as: ada)
        let stream = try await StreamProbe.connect(front, as: ada)
        #expect(await stream.wait(seconds: 20) { $0.hasHello })  // registered with its node's hubs
        #expect(await stream.wait(seconds: 20) { $0.hasHello })

        // The node holding the stream: the one with an open connection besides the /metrics request.
        let open = cluster.nodes.map { NodeCluster.counter("tandem_http_open_connections", on: $0) }
        let victim = try #require(open.indices.max { open[$0] < open[$1] })
        #expect(open[victim] >= 2, "one node holds the stream: \(open)")

        var acknowledged: [String] = []
        func write(_ name: String) throws {
            let response = try front.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["title": Body.field("x")])], zone: zone),
                                          as: ada, database: "private")
            if response.status == 200, response.json.record(0).serverErrorCode == nil { acknowledged.append(name) }
        }
        for n in 0..<5 { try write("before-\(n)") }
        cluster.nodes[victim].kill()
        for n in 0..<5 { try write("after-\(n)") }
        #expect(acknowledged.count >= 8, "nginx sends writes to the live nodes: \(acknowledged)")
        #expect(await stream.wait(seconds: 20) { $0.closed.withLock { $0 } != nil }, "the killed node's stream ends")

        // The client comes back through nginx (another node) and resumes from its token.
        let again = try await StreamProbe.connect(front, as: ada)
        #expect(await again.wait(seconds: 20) { $0.hasHello })  // registered with its node's hubs
        #expect(await again.wait(seconds: 20) { $0.hasHello })
        let resumed = try Self.changes(in: zone, since: token, through: front, as: ada)
        #expect(Set(acknowledged).isSubset(of: Set(resumed.names)), "nothing acknowledged is lost: \(acknowledged) vs \(resumed.names)")
        try write("reconnected")
        #expect(await again.wait(seconds: 20) { $0.notifications.contains { $0["recordName"] == "reconnected" } }, "\(again.envelopes.withLock { $0 })")
    }

    /// A query subscription on Notes in `zone` (its notifications name the record).
    static func notes(in zone: String) -> JSONValue {
        ["subscriptionID": "notes", "subscriptionType": "query", "query": ["recordType": "Note"],
         "zoneID": ["zoneName": .string(zone)], "firesOn": ["create", "update", "delete"]]
    }

    /// changes/zone from `token` (nil: from the start) until no more are coming: the record
    /// names seen and the last token.
    static func changes(in zone: String, since token: String?, through server: TestServer, as person: Person) throws -> (names: [String], token: String?) {
        var names: [String] = []
        var current = token
        for _ in 0..<100 {
            var request: JSONObject = ["zoneID": ["zoneName": .string(zone)]]
            if let current { request["syncToken"] = .string(current) }
            let response = try server.post("changes/zone", ["zones": [.object(request)]], as: person, database: "private")
            guard let result = response.json["zones"]?.arrayValue?.first, result.serverErrorCode == nil else {
                throw TestFailure("changes/zone: \(response.text)")
            }
            names += (result["records"]?.arrayValue ?? []).compactMap { $0["recordName"]?.stringValue }
            current = result["syncToken"]?.stringValue ?? current
            if result["moreComing"] != true { break }
        }
        return (names, current)
    }
}
