import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Long polls (CloudKit Web Services tokens/create and the `webcourierURL` CloudKit JS polls)
/// on any node (issue 20; decisions N58): a token made on one node is polled on the others, a
/// notification committed on one node reaches a poll parked on another, and polls that land on
/// different nodes neither lose nor repeat one. Real peers through `NodeCluster` (PostgreSQL,
/// nats-server, `tandem serve` nodes, nginx round-robin), as `ClusterScenarioTests`.
@Suite(.serialized, .disabled(if: TestStore.isPostgres, "starts its own PostgreSQL nodes; once per run is enough"))
struct LongPollClusterTests {
    static let notes: JSONValue = ["subscriptionID": "notes", "subscriptionType": "query", "query": ["recordType": "Note"],
                                   "firesOn": ["create", "update", "delete"]]

    /// One CloudKit JS poll (one notification per answer): the record name it carries, nil for
    /// 204 (nothing came); anything else fails.
    static func poll(_ url: String, on server: TestServer, timeout: Double) throws -> String? {
        let response = try server.request("GET", url + "?timeout=\(timeout)", token: .some(nil))
        if response.status == 204 { return nil }
        guard response.status == 200, let name = response.json["ck"]?["qry"]?["rid"]?.stringValue else {
            throw TestFailure("poll: \(response.status) \(response.text)")
        }
        return name
    }

    /// Polls until one answers a notification (a woken poll may answer 204 when another notification
    /// of the recipient woke it, S13: the client polls again); nil when none came within 20 s.
    static func next(_ url: String, on server: TestServer) throws -> String? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let name = try poll(url, on: server, timeout: max(1, deadline.timeIntervalSinceNow)) { return name }
        }
        return nil
    }

    /// The token made on A is polled on B and C: a poll parked on B hears a save committed on C;
    /// two saves committed on A while nobody polls are taken one per poll, on C then on B, oldest
    /// first; a poll on A after them finds nothing (neither lost nor repeated).
    @Test func aTokenMadeOnOneNodeIsPolledOnTheOthersWithoutLossOrRepeat() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let ada = try cluster.person("ada")
        _ = try cluster.a.subscribe(Self.notes, as: ada)
        let made = try cluster.a.webcourier(as: ada)
        let path = try #require(URL(string: made)?.path)
        func url(_ node: TestServer) -> String { node.baseURL + path }

        let b = cluster.b
        let parked = Task.detached { try Self.poll(url(b), on: b, timeout: 30) }
        try await Task.sleep(for: .milliseconds(500))
        try cluster.save("first", on: cluster.c, as: ada)
        #expect(try await parked.value == "first", "a poll parked on B hears a save committed on C")

        try cluster.save("second", on: cluster.a, as: ada)
        try cluster.save("third", on: cluster.a, as: ada)
        #expect(try Self.next(url(cluster.c), on: cluster.c) == "second")
        #expect(try Self.next(url(cluster.b), on: cluster.b) == "third")
        #expect(try Self.poll(url(cluster.a), on: cluster.a, timeout: 1) == nil, "taken once, on one node")

        let unknown = try cluster.b.request("GET", cluster.b.baseURL + "/webcourier/1/" + String(repeating: "0", count: 64), token: .some(nil))
        #expect(unknown.status == 404 && unknown.json.serverErrorCode == "NOT_FOUND", "\(unknown.text)")
    }

    /// Everything through nginx round-robin (not sticky): tokens/create, saves and polls land on
    /// different nodes; each poll answers the one save before it, and a last poll finds nothing.
    @Test func throughNginxEveryPollAnswersTheSaveBeforeIt() async throws {
        let cluster = try NodeCluster(nodes: 3, balancer: true)
        let front = try #require(cluster.front)
        let ada = try cluster.person("ada")
        _ = try front.subscribe(Self.notes, as: ada)
        let mailbox = try front.webcourier(as: ada)
        var heard: [String?] = []
        for n in 0..<6 {
            try cluster.save("note-\(n)", on: front, as: ada)
            heard.append(try Self.next(mailbox, on: front))
        }
        #expect(heard == (0..<6).map { "note-\($0)" }, "\(heard)")
        #expect(try Self.poll(mailbox, on: front, timeout: 1) == nil)
        let nodes = Set(try #require(cluster.balancer).upstreamsUsed)
        #expect(nodes.count == 3, "nginx spread the requests over the nodes: \(nodes)")
    }
}
