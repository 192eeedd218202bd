import TandemCore
import TandemHTTP
import TandemStore

/// The stream WebSocket `/stream/1/{container}/{environment}` (DESIGN.md §3): authenticated at
/// connect like any request (`Authorization: Bearer`, or `ckAPIToken` + `ckWebAuthToken`),
/// then typed JSON envelopes both ways.
///
/// Query parameters: `deviceID` names this device (writes made with the same `deviceID`
/// parameter come from it); `notifyOwnChanges=false` asks not to be notified of them.
///
/// Server → client: `{"type":"hello","userRecordName":…,"connectionID":…}` once, then
/// `{"type":"notification","notification":{…}}` (CKNotification fields, never record contents),
/// `{"type":"pong"}` for a ping, `{"type":"error","reason":…}` for a message it cannot read,
/// `{"type":"resync","reason":…}` when events from other nodes may have been missed (fetch
/// changes from your tokens and highlight lists again; decisions N43);
/// Shared with You adds `conversation.created`, `conversation.event`, `collaboration.prompt`
/// and `highlights` envelopes.
/// Client → server: `{"type":"ping"}`, `{"type":"highlights.subscribe","app":…}`, and
/// `presence.open|watch|close` (`CollaborationPresence`). Close codes: 4401 not signed in or token invalid,
/// Group session envelopes and binary messenger frames: see `SessionHub` (SessionEnvelopes.swift).
/// 4404 unknown container, 4008 slow consumer (resume from your change tokens).
struct StreamResponder: WebSocketResponder {
    static let prefix = "/stream/1/"
    let services: Services
    let registry: StreamRegistry

    func shouldUpgrade(_ head: HTTPRequestHead) -> Bool {
        guard head.path.hasPrefix(Self.prefix) else { return false }
        let parts = head.path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && Environment(rawValue: String(parts[1])) != nil && !parts[0].isEmpty
    }

    func accept(_ connection: WebSocketConnection) -> WebSocketDecision {
        let parts = connection.head.path.dropFirst(Self.prefix.count).split(separator: "/").map(String.init)
        let parameters = QueryString.parse(connection.head.query)
        let user: UserAccount
        do {
            user = try services.authenticator.user(headers: connection.head.headers["authorization"], parameters: parameters,
                                                   container: parts[0], signInURL: "")
        } catch let error as CloudKitError {
            return .refuse(WebSocketClose(code: 4401, reason: error.reason))
        } catch {
            return .refuse(WebSocketClose(code: 4500, reason: "internal error"))
        }
        guard (try? services.store.read({ try $0.containerExists(parts[0]) })) == true else {
            return .refuse(WebSocketClose(code: 4404, reason: "no container '\(parts[0])'"))
        }
        registry.add(StreamRegistry.Client(connection: connection, user: user.recordName, container: parts[0], environment: parts[1],
                                           deviceID: parameters["deviceID"] ?? "", muteOwnDevice: parameters["notifyOwnChanges"] == "false"))
        _ = connection.send(text: JSONWriter.string(["type": "hello", "userRecordName": .string(user.recordName),
                                                     "connectionID": .int(Int64(connection.id))]))
        if let environment = Environment(rawValue: parts[1]) {
            services.sessions.connected(connection, user: user.recordName, container: parts[0], environment: environment)
        }
        return .accept
    }

    func received(_ message: WebSocketMessage, on connection: WebSocketConnection) {
        if case .binary(let bytes) = message {
            services.sessions.receive(bytes, on: connection)
            return
        }
        guard case .text(let text) = message else { return }
        let envelope: JSONValue
        do {
            envelope = try JSONParser.parse(Array(text.utf8))
        } catch {
            // Say why, as the HTTP API does: a number past 64 bits or a trailing NUL is not "no type".
            _ = connection.send(text: JSONWriter.string(["type": "error", "reason": .string("the envelope is not JSON this server reads: \(error)")]))
            return
        }
        guard let type = envelope["type"]?.stringValue else {
            _ = connection.send(text: JSONWriter.string(["type": "error", "reason": "send JSON envelopes with a 'type'"]))
            return
        }
        switch type {
        case "ping":
            _ = connection.send(text: JSONWriter.string(["type": "pong"]))
        case "highlights.subscribe":
            // Shared with You: snapshots of the highlight list for one app (HighlightStream).
            guard let app = envelope["app"]?.stringValue, !app.isEmpty, !app.utf8.contains(0), let client = registry.client(connection),
                  let environment = Environment(rawValue: client.environment) else {
                _ = connection.send(text: JSONWriter.string(["type": "error", "reason": "send {\"type\":\"highlights.subscribe\",\"app\":\"TEAMID.bundle.id\"}"]))
                return
            }
            let baseURL = services.publicURL ?? ("http://" + (connection.head.headers["host"] ?? "127.0.0.1"))
            services.highlightStream.subscribe(connection, user: client.user, container: client.container, environment: environment,
                                               baseURL: baseURL, app: app)
        case _ where CollaborationPresence.handles(type):
            guard let client = registry.client(connection), let environment = Environment(rawValue: client.environment) else { return }
            services.presence.handle(type, envelope, on: connection, user: client.user, container: client.container, environment: environment)
        case _ where SessionHub.handles(type):
            services.sessions.handle(type, envelope, on: connection)
        default:
            _ = connection.send(text: JSONWriter.string(["type": "error", "reason": .string("unknown envelope type '\(type)'")]))
        }
    }

    func closed(_ connection: WebSocketConnection, with close: WebSocketClose) {
        registry.remove(connection)
        services.sessions.disconnected(connection)
        services.highlightStream.unsubscribe(connection)
        services.presence.disconnected(connection)
    }
}
