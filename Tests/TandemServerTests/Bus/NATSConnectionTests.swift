import Foundation
import Synchronization
import Testing
import TandemNATS
import TandemTestSupport

/// TandemNATS against a real nats-server (decisions N9): payloads arrive byte for byte and in
/// order, a connection does not hear itself, and a restart of the server is reconnected to and
/// reported.
@Suite(.serialized)
struct NATSConnectionTests {
    /// What one connection heard.
    final class Heard: Sendable {
        let payloads = Mutex<[[UInt8]]>([])
        let events = Mutex<[String]>([])

        func wait(seconds: Double = 20, until condition: (Heard) -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while !condition(self) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            return condition(self)
        }
    }

    static func connect(_ server: NATSServer, subject: String? = nil) throws -> (NATSConnection, Heard) {
        let heard = Heard()
        let connection = try NATSConnection(servers: [server.url], name: "test", reconnectWaitMilliseconds: 100) { event in
            heard.events.withLock { $0.append("\(event)") }
        }
        if let subject {
            try connection.subscribe(subject) { payload in heard.payloads.withLock { $0.append(payload) } }
        }
        return (connection, heard)
    }

    @Test func payloadsArriveExactlyAndInOrderButNotToTheirSender() throws {
        let server = try NATSServer()
        let (receiver, heard) = try Self.connect(server, subject: "tandem.1.>")
        let (sender, echoed) = try Self.connect(server, subject: "tandem.1.>")
        defer { receiver.close(); sender.close() }
        let binary: [UInt8] = [0, 255, 10, 13] + Array(repeating: 0x41, count: 100_000)
        var sent: [[UInt8]] = [[], binary]
        for n in 0..<200 { sent.append(Array("event \(n)".utf8)) }
        for payload in sent { #expect(sender.publish("tandem.1.development.x", payload)) }
        #expect(sender.publish("other.subject", [1]), "published, but nobody subscribes to it")
        #expect(heard.wait { $0.payloads.withLock { $0.count } >= sent.count })
        #expect(heard.payloads.withLock { $0 } == sent)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(echoed.payloads.withLock { $0.isEmpty }, "a connection does not hear what it published")
    }

    @Test func aRestartedServerIsReconnectedToAndReported() throws {
        let server = try NATSServer()
        let (receiver, heard) = try Self.connect(server, subject: "tandem.1.>")
        let (sender, told) = try Self.connect(server)
        defer { receiver.close(); sender.close() }
        try server.stop(abruptly: true)
        #expect(heard.wait { $0.events.withLock { $0.contains("disconnected") } })
        try server.start()
        #expect(heard.wait { $0.events.withLock { $0.contains { $0.hasPrefix("reconnected") } } }, "\(heard.events.withLock { $0 })")
        #expect(told.wait { $0.events.withLock { $0.contains { $0.hasPrefix("reconnected") } } }, "\(told.events.withLock { $0 })")
        #expect(sender.publish("tandem.1.cluster", Array("after".utf8)))
        #expect(heard.wait { $0.payloads.withLock { $0.contains(Array("after".utf8)) } })
    }

    /// libnats reports the URL it reconnected to as configured, password included; nodes log
    /// that event, so it must arrive without the password (stop 40's review).
    @Test func aReconnectNamesTheServerWithoutItsPassword() throws {
        let server = try NATSServer(arguments: ["--user", "tandem", "--pass", "bus-secret-pw"])
        let heard = Heard()
        let connection = try NATSConnection(servers: ["nats://tandem:bus-secret-pw@127.0.0.1:\(server.port)"], name: "test",
                                            reconnectWaitMilliseconds: 100) { event in
            heard.events.withLock { $0.append("\(event)") }
        }
        defer { connection.close() }
        try server.stop(abruptly: true)
        #expect(heard.wait { $0.events.withLock { $0.contains("disconnected") } })
        try server.start()
        #expect(heard.wait { $0.events.withLock { $0.contains { $0.hasPrefix("reconnected") } } }, "\(heard.events.withLock { $0 })")
        let events = heard.events.withLock { $0 }.joined(separator: " ")
        #expect(!events.contains("bus-secret-pw"), "\(events)")
        #expect(events.contains("127.0.0.1:\(server.port)"), "\(events)")
    }

    @Test func aClosedConnectionRefusesToPublishAndAnUnreachableOneIsAnError() throws {
        let server = try NATSServer()
        let (connection, _) = try Self.connect(server)
        connection.close()
        #expect(!connection.publish("tandem.1.cluster", [1]))
        connection.close()
        let port = try PostgresCluster.freePort()
        #expect(throws: NATSError.self) { try NATSConnection(servers: ["nats://127.0.0.1:\(port)"], name: "test") { _ in } }
    }
}
