import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Tandem
import TandemTestSupport

/// A real `tandem serve` with `users` users (user0…), for the group session suites.
final class SessionServer: @unchecked Sendable {
    static let container = "iCloud.com.example.sessions"
    /// Default settings, shared by the suites that do not stop the server or change limits.
    static let shared: SessionServer = {
        do { return try SessionServer(users: 5) } catch { fatalError("cannot start tandem serve: \(error)") }
    }()

    let dataDirectory: String
    let tokens: [String]
    let recordNames: [String]
    let server: TandemProcess.Server

    init(users: Int, extraArguments: [String] = []) throws {
        dataDirectory = NSTemporaryDirectory() + "tandem-sessions-test-" + UUID().uuidString
        // `shared` is never deinitialised: its directory goes when the process ends.
        ExitCleanup.removeAtExit(dataDirectory)
        try TandemProcess.admin(["container", "create", Self.container, "--data", dataDirectory])
        var tokens: [String] = []
        var names: [String] = []
        for index in 0..<users {
            names.append(try TandemProcess.admin(["user", "add", "--email", "user\(index)@example.com", "--data", dataDirectory]))
            tokens.append(try TandemProcess.admin(["token", "create", "--user", "user\(index)@example.com", "--data", dataDirectory]))
        }
        self.tokens = tokens
        recordNames = names
        server = try TandemProcess.serve(dataDirectory: dataDirectory, extraArguments: ["--quiet"] + extraArguments)
    }

    deinit {
        if server.process.isRunning { server.process.terminate(); server.process.waitForTermination() }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    var serverURL: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// A fresh container (so a fresh stream connection) for user `index`.
    func container(_ index: Int) -> Container {
        Container(identifier: Self.container, environment: .development, serverURL: serverURL, credentials: .userToken(tokens[index]),
                  configuration: Container.Configuration(retryPolicy: RetryPolicy(maximumAttempts: 1)))
    }

    /// SIGKILL, as a crash would end every connection.
    func kill() {
        Foundation.kill(server.process.processIdentifier, SIGKILL)
        server.process.waitForTermination()
    }

    /// POSTs JSON to `/tandem/1/{container}/development/{operation}` as user `index`.
    @discardableResult
    func post(_ operation: String, as index: Int, _ body: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: serverURL.appendingPathComponent("/tandem/1/\(Self.container)/development/\(operation)"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(tokens[index])", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw TestFailure("\(operation) failed: \(json)") }
        return json
    }

    /// A conversation of user `creator` with `members` (indexes).
    func conversation(_ creator: Int, with members: [Int]) async throws -> String {
        let answer = try await post("conversations/create", as: creator, ["members": members.map { recordNames[$0] }, "group": true])
        guard let id = answer["conversationID"] as? String ?? answer["id"] as? String else { throw TestFailure("no conversation ID in \(answer)") }
        return id
    }

    func removeMember(_ member: Int, from conversation: String, by index: Int) async throws {
        try await post("conversations/members/remove", as: index, ["conversation": conversation, "member": recordNames[member]])
    }

    /// The server's count of dropped droppable WebSocket messages (/metrics).
    func droppedMessages() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: serverURL.appendingPathComponent("/metrics"))
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("tandem_websocket_dropped_messages_total ") }
        return Int(line?.split(separator: " ").last ?? "0") ?? 0
    }
}

/// The activity the suites share.
struct Sketch: GroupActivity, Equatable {
    static let activityIdentifier = "com.example.sketch"
    var canvas: String
    var policy: GroupActivityMetadata.LifetimePolicy = .automatic
    var metadata: GroupActivityMetadata {
        GroupActivityMetadata(title: "Sketch \(canvas)", subtitle: "together", type: .createTogether,
                              fallbackURL: URL(string: "https://example.com/sketch"), lifetimePolicy: policy)
    }
}

struct Ping: Codable, Sendable, Equatable {
    var sender: Int
    var number: Int
}

/// The first session of `A` in `conversation` delivered to `client`.
func session<A: GroupActivity>(_ type: A.Type, in conversation: String, on client: GroupActivities,
                               seconds: Double = 20) async throws -> GroupSession<A> {
    try await withTimeout(seconds) {
        for await session in A.sessions(on: client) where session.conversationID == conversation { return session }
        throw TestFailure("the sessions sequence ended")
    }
}

/// Waits until `session` reaches `state`.
func waitFor<A>(_ session: GroupSession<A>, _ state: GroupSessionState, seconds: Double = 20) async throws {
    try await withTimeout(seconds) {
        for await current in session.stateUpdates() where current == state { return }
        if session.state != state { throw TestFailure("state ended at \(session.state), wanted \(state)") }
    }
}

/// A conversation of `users`, the first declaring it active and activating `activity`; each
/// user's (fresh) client with its session, not joined yet.
func startSession(_ server: SessionServer, users: [Int], activity: Sketch = Sketch(canvas: "A"))
    async throws -> (conversation: String, clients: [Container], sessions: [GroupSession<Sketch>]) {
    let conversation = try await server.conversation(users[0], with: Array(users.dropFirst()))
    let clients = users.map { server.container($0) }
    try await clients[0].groupActivities.setActiveConversation(conversation)
    _ = try await activity.activate(on: clients[0].groupActivities)
    var sessions: [GroupSession<Sketch>] = []
    for client in clients { sessions.append(try await session(Sketch.self, in: conversation, on: client.groupActivities)) }
    return (conversation, clients, sessions)
}

/// Collects messages of one type from a messenger until `count` arrived.
final class Inbox<Message: Decodable & Sendable>: Sendable {
    final class Box: Sendable {
        let items = Mutex<[(Message, GroupSessionMessenger.MessageContext)]>([])
    }
    let box = Box()
    private let task: Task<Void, Never>

    init(_ messenger: GroupSessionMessenger) {
        let stream = messenger.messages(of: Message.self)
        let box = self.box
        task = Task { for await item in stream { box.items.withLock { $0.append(item) } } }
    }

    deinit { task.cancel() }

    var count: Int { box.items.withLock { $0.count } }
    var messages: [Message] { box.items.withLock { $0.map(\.0) } }
    var received: [(Message, GroupSessionMessenger.MessageContext)] { box.items.withLock { $0 } }

    func wait(for count: Int, seconds: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while self.count < count {
            guard Date() < deadline else { throw TestFailure("received \(self.count) of \(count) messages") }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}
