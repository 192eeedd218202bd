import Foundation
import Synchronization
import TandemCore
import TandemHTTP

/// A stream WebSocket client (TandemHTTP's `WebSocketClient`) that collects envelopes in the
/// background, so a test can wait for them.
final class StreamProbe: Sendable {
    let client: WebSocketClient
    let envelopes = Mutex<[JSONValue]>([])
    let closed = Mutex<WebSocketClose?>(nil)
    /// Binary messages (session frames) received so far.
    let frames = Mutex<[[UInt8]]>([])

    static func connect(_ server: TestServer, as person: Person?, query: String = "") async throws -> StreamProbe {
        var headers: [(String, String)] = []
        if let person { headers.append(("Authorization", "Bearer \(person.token)")) }
        let url = URL(string: "ws://127.0.0.1:\(server.port)/stream/1/\(TestServer.container)/development\(query.isEmpty ? "" : "?" + query)")!
        return StreamProbe(try await WebSocketClient.connect(to: url, headers: headers))
    }

    private init(_ client: WebSocketClient) {
        self.client = client
        Task { [self] in
            for await event in client.events {
                switch event {
                case .message(.text(let text)):
                    if let value = try? JSONParser.parse(Array(text.utf8)) { envelopes.withLock { $0.append(value) } }
                case .message(.binary(let bytes)):
                    frames.withLock { $0.append(bytes) }
                case .closed(let close):
                    closed.withLock { $0 = close }
                }
            }
        }
    }

    var closeCode: Int? { closed.withLock { $0?.code } }
    var hasHello: Bool { envelopes.withLock { $0.contains { $0["type"] == "hello" } } }
    func has(_ type: String) -> Bool { envelopes.withLock { $0.contains { $0["type"] == .string(type) } } }
    /// The envelopes of `type` received so far, oldest first.
    func all(_ type: String) -> [JSONValue] { envelopes.withLock { $0.filter { $0["type"] == .string(type) } } }

    /// Notifications received so far.
    var notifications: [JSONValue] {
        envelopes.withLock { $0.filter { $0["type"] == "notification" }.compactMap { $0["notification"] } }
    }

    /// Waits until `condition` holds or `seconds` pass; returns whether it held.
    @discardableResult
    func wait(seconds: Double = 5, until condition: @escaping (StreamProbe) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(self)
    }
}
