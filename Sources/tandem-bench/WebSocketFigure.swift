import Foundation
import TandemCore
import TandemHTTP

/// WebSocket transport figures, in process over loopback: echo round trips of one client
/// (messages/s with a window of messages in flight), and the fan-out of one message to 1,000
/// connected clients (time until every client has it). Printed, not judged: no ceiling yet.
enum WebSocketFigure {
    struct Figures: Sendable {
        var echoes = 0
        var echoSeconds = 0.0
        var fans = 0
        /// Per round, seconds from the broadcast until the last client had it, sorted.
        var fanOut: [Double] = []
    }

    /// Runs the async measurement from the synchronous bench command, blocking this thread.
    static func run(options: BenchOptions, report: Report) throws {
        report.section("websocket")
        let outcome = Locked<Result<Figures, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let figures = try await measure(size: options.size)
                outcome.withLock { $0 = .success(figures) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let figures = try outcome.withLock({ $0 })?.get() else { return }

        let echoRate = Double(figures.echoes) / figures.echoSeconds
        report.say("  echo, one client, 64-byte text, all sent at once: \(Format.count(figures.echoes)) round trips in "
            + String(format: "%.2f s", figures.echoSeconds) + " = \(Format.rate(echoRate))")
        report.add("WebSocket echo msgs/s, 1 client", value: Format.rate(echoRate), verdict: .info)
        let median = figures.fanOut[figures.fanOut.count / 2]
        report.say("  fan-out of one message to \(figures.fans) clients, until the last has it: median "
            + Format.latency(median) + ", worst " + Format.latency(figures.fanOut.last ?? .nan)
            + " (\(figures.fanOut.count) rounds)")
        report.add("WebSocket fan-out to \(Format.count(figures.fans)) clients", value: Format.latency(median), verdict: .info)
    }

    private static func measure(size: BenchSize) async throws -> Figures {
        var figures = Figures()
        let responder = BenchWebSocketResponder()
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, workerCount: 8)
        configuration.webSocket.sendQueueMessages = 200_000
        let server = HTTPServer(configuration: configuration, responder: NoHTTP(), webSocketResponder: responder)
        try server.start()
        defer { server.shutdown() }
        let base = "ws://127.0.0.1:\(server.port)"

        // One client, echo: send everything, read every echo back.
        let count = size.pick(full: 100_000, quick: 20_000, smoke: 2_000)
        let client = try await WebSocketClient.connect(to: URL(string: base + "/echo")!)
        var events = client.events.makeAsyncIterator()
        let payload = String(repeating: "x", count: 64)
        let started = ContinuousClock.now
        let sender = Task { for _ in 0..<count { await client.send(text: payload) } }
        while figures.echoes < count, case .message = await events.next() { figures.echoes += 1 }
        await sender.value
        figures.echoSeconds = seconds(ContinuousClock.now - started)
        client.close()

        // Fan-out: 1,000 clients connected, one broadcast, time until all have it.
        figures.fans = size.pick(full: 1_000, quick: 1_000, smoke: 100)
        var clients: [WebSocketClient] = []
        for _ in 0..<figures.fans {
            clients.append(try await WebSocketClient.connect(to: URL(string: base + "/fan")!))
        }
        while responder.fanCount < figures.fans { try await Task.sleep(for: .milliseconds(10)) }
        for round in 0..<size.pick(full: 10, quick: 3, smoke: 1) {
            let sentAt = ContinuousClock.now
            responder.broadcast("round \(round)")
            let arrivals = await withTaskGroup(of: Double.self) { group in
                for fan in clients {
                    group.addTask {
                        for await event in fan.events {
                            if case .message = event { return seconds(ContinuousClock.now - sentAt) }
                        }
                        return .nan
                    }
                }
                return await group.reduce(into: [Double]()) { $0.append($1) }
            }
            figures.fanOut.append(arrivals.max() ?? .nan)
        }
        clients.forEach { $0.close() }
        figures.fanOut.sort()
        return figures
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Echoes on `/echo`; keeps `/fan` connections for `broadcast`.
private final class BenchWebSocketResponder: WebSocketResponder {
    private let fans = Locked<[WebSocketConnection]>([])

    var fanCount: Int { fans.withLock { $0.count } }

    func accept(_ connection: WebSocketConnection) -> WebSocketDecision {
        if connection.head.path == "/fan" { fans.withLock { $0.append(connection) } }
        return .accept
    }

    func received(_ message: WebSocketMessage, on connection: WebSocketConnection) {
        if case .text(let text) = message { connection.send(text: text) }
    }

    func broadcast(_ text: String) {
        for connection in fans.withLock({ $0 }) { connection.send(text: text) }
    }
}

private struct NoHTTP: HTTPResponder {
    func respond(to request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 404) }
    func bodyLimit(for head: HTTPRequestHead) -> Int { 0 }
    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse { HTTPResponse(status: status) }
}
