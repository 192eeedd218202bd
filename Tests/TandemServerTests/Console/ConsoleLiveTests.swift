import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// The console's views of live state (decisions C43, C44): stream WebSockets and long polls open
/// now, and live group sessions with their participants, against a real server with real
/// stream clients (`StreamProbe`) and a real long poll.
@Suite struct ConsoleLiveTests {
    private static let lazy = LazyTestServer(arguments: TestServer.cheapHash)

    /// This suite's server, with `ConsoleTests`' administrator.
    static var server: TestServer {
        get throws { try ConsoleTests.withAdmin(lazy.server) }
    }

    static func admin() throws -> ConsoleClient {
        try ConsoleTests.admin(on: lazy.server)
    }

    static let connections = "/console/containers/\(TestServer.container)/connections/development"

    /// GETs `path` until `condition` holds for its text or 10 s pass; returns the last text.
    static func page(_ console: ConsoleClient, _ path: String, until condition: (String) -> Bool) async throws -> String {
        let deadline = Date().addingTimeInterval(10)
        var text = try console.get(path).text
        while !condition(text) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            text = try console.get(path).text
        }
        return text
    }

    /// The rows of the table with this `id`.
    static func rows(_ html: String, table id: String) -> [String] {
        guard let start = html.range(of: "<table id=\"\(id)\"") else { return [] }
        let table = html[start.upperBound...]
        let body = String(table[..<(table.range(of: "</table>")?.lowerBound ?? table.endIndex)])
        return body.components(separatedBy: "<tr>").dropFirst(2).map { $0 }
    }

    @Test func openStreamsAndWaitingLongPollsAreListedWithoutTheirTokens() async throws {
        let server = try Self.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let console = try Self.admin()
        let device = unique("phone")
        let probe = try await StreamProbe.connect(server, as: ada, query: "deviceID=\(device)&notifyOwnChanges=false")
        #expect(await probe.wait { $0.hasHello })
        let shown = try await Self.page(console, Self.connections) { $0.contains(device) }
        let row = try #require(Self.rows(shown, table: "streams").first { $0.contains(device) }, "\(shown)")
        #expect(row.contains(ada.email) && row.contains("<td>no</td>"), "\(row)")
        #expect(!shown.contains(ada.token))

        // A long poll parks on bob's push token; a write to his subscription wakes it.
        let courier = try server.webcourier(as: bob)
        _ = try server.subscribe(["subscriptionID": .string(unique("db")), "subscriptionType": "database"], as: bob)
        let answered = Mutex<Int?>(nil)
        Thread.detachNewThread {
            let response = try? server.request("GET", courier + "?format=tandem&timeout=30", token: .some(nil))
            answered.withLock { $0 = response?.json["notifications"]?.arrayValue?.count ?? -1 }
        }
        let waiting = try await Self.page(console, Self.connections) { page in Self.rows(page, table: "long-polls").contains { $0.contains(bob.email) } }
        #expect(Self.rows(waiting, table: "long-polls").contains { $0.contains(bob.email) }, "\(waiting)")
        let token = String(courier.split(separator: "/").last ?? "")
        #expect(!waiting.contains(token), "the push token is not shown")
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("wake"), recordType: "Item", fields: [:])]),
                            as: bob, database: "private")
        let deadline = Date().addingTimeInterval(10)
        while answered.withLock({ $0 }) == nil && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(answered.withLock { $0 } == 1)
        let after = try await Self.page(console, Self.connections) { page in !Self.rows(page, table: "long-polls").contains { $0.contains(bob.email) } }
        #expect(!Self.rows(after, table: "long-polls").contains { $0.contains(bob.email) })

        probe.client.close()
        let closed = try await Self.page(console, Self.connections) { !$0.contains(device) }
        #expect(!closed.contains(device), "a closed stream is gone")
    }

    @Test func liveGroupSessionsShowTheirActivityParticipantsAndMessageCount() async throws {
        let server = try Self.server
        let cat = try server.person("cat"), dan = try server.person("dan")
        let created = try server.tandem("conversations/create", ["members": [.string(dan.recordName)]], as: cat)
        let conversation = try #require(created.json["conversationID"]?.stringValue)
        let catProbe = try await StreamProbe.connect(server, as: cat)
        let danProbe = try await StreamProbe.connect(server, as: dan)
        _ = try await SessionProtocolTests.reply(catProbe, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await SessionProtocolTests.reply(catProbe, ["type": "activity.activate", "activity": SessionProtocolTests.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue)
        for probe in [catProbe, danProbe] {
            let joined = try await SessionProtocolTests.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
            #expect(joined["result"]?["participantID"]?.stringValue != nil)
        }
        let payload = Array("hello".utf8)
        await catProbe.client.send(binary: SessionProtocolTests.frame(session: sessionID, clientSequence: 1, reliable: true, type: "chat", payload: payload))
        #expect(await danProbe.wait { $0.frames.withLock { $0.contains { $0.suffix(payload.count) == payload[...] } } })

        let console = try Self.admin()
        let path = "/console/containers/\(TestServer.container)/sharedwithyou/development"
        let page = try await Self.page(console, path) { $0.contains(sessionID) }
        let row = try #require(Self.rows(page, table: "live-sessions").first { $0.contains(sessionID) }, "\(page)")
        #expect(row.contains("com.example.protocol"))
        #expect(row.contains(conversation))
        #expect(row.contains("\(cat.recordName) since") && row.contains("\(dan.recordName) since"), "\(row)")
        #expect(row.contains("<td>2</td><td>1</td></tr>"), "audience 2, one message: \(row)")

        // Dan's stream closes: he leaves the session, Cat stays.
        danProbe.client.close()
        let left = try await Self.page(console, path) { page in
            Self.rows(page, table: "live-sessions").first { $0.contains(sessionID) }.map { !$0.contains(dan.recordName + " since") } ?? false
        }
        let remaining = try #require(Self.rows(left, table: "live-sessions").first { $0.contains(sessionID) })
        #expect(remaining.contains("\(cat.recordName) since") && !remaining.contains("\(dan.recordName) since"))
        catProbe.client.close()
    }
}
