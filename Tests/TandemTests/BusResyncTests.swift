import Foundation
import TandemTestSupport
import Testing
import Tandem

/// The `resync` stream envelope (decisions N43): when a node's bus reconnects, the events other
/// nodes published meanwhile may be lost; the node tells its stream clients, and the SDK's sync
/// engine fetches from its change tokens instead of waiting for a push that will never come.
///
/// Real peers: two `tandem serve` nodes on one database of the shared PostgreSQL cluster, with
/// one `secret.key`, and `--bus` to a nats-server of the test's own, which is SIGKILLed and
/// started again (as `eventsFlowAgainAfterNATSRestartsAndTheGapIsCounted` does on the server).
@Suite("Bus resync", .serialized)
struct BusResyncTests {
    @Test func aSyncEngineOnTheReconnectedNodeFetchesAChangeWhosePushWasLost() async throws {
        let nodes = try BusNodes()
        // `tandem listen` on B shows the envelope itself; the engine below shows what the SDK does with it.
        let (listener, envelopes) = try nodes.listen(on: nodes.b)
        defer { listener.terminate() }
        let device = Device()
        let onB = nodes.container(nodes.b)
        let engine = SyncEngine(configuration: .init(database: onB.privateDatabase, stateSerialization: nil, delegate: device,
                                                     automaticallySync: true))
        #expect(await eventually(30) { await device.fetchRuns >= 1 }, "the engine's first fetch on connecting")

        // The bus works: a save on A is pushed to B's stream and fetched.
        let onA = nodes.container(nodes.a)
        let zone = try await onA.privateDatabase.save(RecordZone(zoneName: "Notes"))
        let before = Record.ID(recordName: "before", zoneID: zone.zoneID)
        _ = try await onA.privateDatabase.save(Record(recordType: "Note", recordID: before))
        #expect(await eventually(30) { await device.records[before] != nil }, "a save on A reaches the engine on B")

        // nats-server dies; a save on A is committed, and its push dies with A (SIGKILL: nothing
        // of its reconnect buffer is sent). B's stream stays open all along.
        try nodes.nats.stop(abruptly: true)
        let missed = Record.ID(recordName: "while-the-bus-was-down", zoneID: zone.zoneID)
        _ = try await onA.privateDatabase.save(Record(recordType: "Note", recordID: missed))
        nodes.kill(nodes.a)
        let runsBefore = await device.fetchRuns
        try nodes.nats.start()

        // B reconnects, counts the gap, sends `resync`; the engine fetches and finds the record.
        #expect(await eventually(60) { envelopes.value.contains(#""type":"resync""#) }, "\(envelopes.value.suffix(1000))")
        let found = await eventually(30) { await device.records[missed] != nil }
        let runsAfter = await device.fetchRuns
        #expect(found, "the engine on B fetched after resync (fetch runs: \(runsBefore) before, \(runsAfter) now)")
        withExtendedLifetime(engine) {}
    }
}

/// Two nodes of one cluster for the SDK's tests: `a` and `b`, `--store` one fresh database of the
/// shared PostgreSQL cluster, `--bus` to `nats`, B's `--data` holding a copy of A's `secret.key`
/// (decisions N13 describes the layout; the server's `NodeCluster` is the full harness, which
/// the SDK's tests cannot use: they must not depend on TandemServer).
final class BusNodes: @unchecked Sendable {
    let nats: NATSServer
    let store: String
    let token: String
    let a: TandemProcess.Server
    let b: TandemProcess.Server

    init() throws {
        let nats = try NATSServer()
        let store = try PostgresCluster.shared().createDatabase()
        self.nats = nats
        self.store = store
        let first = try ExitCleanup.temporaryDirectory("tandem-sdk-node")
        let second = try ExitCleanup.temporaryDirectory("tandem-sdk-node")
        try TandemProcess.admin(["container", "create", TestServer.container, "--data", first, "--store", store])
        try TandemProcess.admin(["user", "add", "--email", "ada@example.com", "--name", "Ada", "--data", first, "--store", store])
        token = try TandemProcess.admin(["token", "create", "--user", "ada@example.com", "--data", first, "--store", store])
        let arguments = ["--store", store, "--bus", nats.url, "--pool-size", "2", "--quiet"]
        a = try TandemProcess.serve(dataDirectory: first, extraArguments: arguments)
        try FileManager.default.copyItem(atPath: first + "/secret.key", toPath: second + "/secret.key")
        b = try TandemProcess.serve(dataDirectory: second, extraArguments: arguments)
    }

    /// Ada's container on `node`, reconnecting its stream quickly.
    func container(_ node: TandemProcess.Server) -> Container {
        Container(identifier: TestServer.container, environment: .development, serverURL: URL(string: "http://127.0.0.1:\(node.port)")!,
                  credentials: .userToken(token),
                  configuration: Container.Configuration(deviceID: unique("device"), retryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: 0.1),
                                                         streamReconnection: RetryPolicy(initialDelay: 0.1, maximumDelay: 1)))
    }

    /// SIGKILL: the node ends without flushing anything.
    func kill(_ node: TandemProcess.Server) {
        Foundation.kill(node.process.processIdentifier, SIGKILL)
        node.process.waitForTermination()
    }

    /// `tandem listen` on `node` as Ada: every stream envelope, one JSON line each, in `output`.
    func listen(on node: TandemProcess.Server) throws -> (process: Process, output: TandemProcess.CapturedOutput) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TandemProcess.binary)
        process.arguments = ["listen", "--token", token, "--container", TestServer.container, "--server", "http://127.0.0.1:\(node.port)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let lines = TandemProcess.CapturedOutput()
        pipe.fileHandleForReading.readabilityHandler = { handle in lines.append(handle.availableData) }
        try process.run()
        ExitCleanup.terminateAtExit(process)
        let deadline = Date(timeIntervalSinceNow: 30)
        while !lines.value.contains(#""type":"hello""#) {
            guard Date() < deadline, process.isRunning else { throw TandemProcessError("tandem listen did not connect: \(lines.value)") }
            usleep(20_000)
        }
        return (process, lines)
    }
}
