import Foundation
import TandemHTTP

/// `tandem listen`: opens the stream WebSocket (`/stream/1/{container}/{environment}`) as a
/// user and prints every text message the server sends, one JSON object per line, so push can
/// be watched from a shell (curl opens no WebSockets; decision F6).
///
/// The first line is the server's `{"type":"hello",…}`; notifications follow as
/// `{"type":"notification","notification":{…}}`. Each line is written (unbuffered) as it
/// arrives. Exit status: 0 after `--count N` messages, 1 when the server closes the connection
/// (its close code and reason on standard error: 4401 for a refused token, 4404 for an unknown
/// container) or it cannot be reached.
enum ListenCommand {
    static let usage = """
          tandem listen --token TOKEN --container ID [--environment development|production] [--server URL]
                        [--device-id ID] [--count N]   (prints each stream message as one JSON line; stops after N messages;
                         --server default: $TANDEM_URL, else http://127.0.0.1:8080)
        """

    static func run(_ options: Options) throws -> Int32 {
        guard let token = options.value("token"), let container = options.value("container") else {
            throw UsageError("listen needs --token TOKEN --container ID")
        }
        let environment = options.value("environment") ?? "development"
        guard environment == "development" || environment == "production" else {
            throw UsageError("--environment is development or production")
        }
        let count = try options.value("count").map { value in
            guard let n = Int(value), n > 0 else { throw UsageError("--count takes a number of messages, at least 1") }
            return n
        }
        // TANDEM_URL, as the examples read it (SharedNotes), before the default.
        let server = options.value("server") ?? ProcessInfo.processInfo.environment["TANDEM_URL"] ?? "http://127.0.0.1:8080"
        let url = try streamURL(server: server, container: container,
                                environment: environment, device: options.value("device-id") ?? "tandem-listen")
        // The client is async; this command has nothing else to do, so the main thread parks
        // in dispatchMain and the task ends the process.
        Task {
            exit(await listen(url: url, token: token, count: count))
        }
        dispatchMain()
    }

    /// `ws://host:port/stream/1/{container}/{environment}?deviceID=…` from the server's http URL.
    static func streamURL(server: String, container: String, environment: String, device: String) throws -> URL {
        guard server.hasPrefix("http://") else {
            throw UsageError("--server takes http://host:port (the stream client speaks plain ws://, not TLS)")
        }
        let base = "ws://" + server.dropFirst("http://".count).reversed().drop { $0 == "/" }.reversed()
        var components = URLComponents(string: base + "/stream/1/\(container)/\(environment)")
        components?.queryItems = [URLQueryItem(name: "deviceID", value: device)]
        guard let url = components?.url else { throw UsageError("--server or --container does not make a URL") }
        return url
    }

    static func listen(url: URL, token: String, count: Int?) async -> Int32 {
        let client: WebSocketClient
        do {
            client = try await WebSocketClient.connect(to: url, headers: [("Authorization", "Bearer \(token)")])
        } catch {
            CommandLine.fail("error: \(error.reason)")
            return 1
        }
        var printed = 0
        for await event in client.events {
            switch event {
            case .message(.text(let text)):
                try? FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
                printed += 1
                if let count, printed >= count {
                    client.close()
                    return 0
                }
            case .message(.binary):
                continue   // group-session messenger frames: not JSON
            case .closed(let close):
                CommandLine.fail("closed by the server: \(close.code) \(close.reason)")
                return 1
            }
        }
        return 1
    }
}
