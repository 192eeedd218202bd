import Foundation
import Synchronization
import TandemHTTP

/// A WebSocket responder for end-to-end tests. Upgrades only paths under `/ws`.
/// - Decision: waits `decisionDelay` ms (a token lookup), then refuses with 4403 when the
///   `authorization` header is `Bearer deny`, else accepts.
/// - Messages: text `close:CODE:REASON` closes with that code; anything else is echoed.
/// - Records every accepted connection by id, what each received, and how each closed.
final class TestWebSocketResponder: WebSocketResponder {
    let decisionDelay: Int
    private let connections = Mutex<[UInt64: WebSocketConnection]>([:])
    private let closes = Mutex<[UInt64: WebSocketClose]>([:])
    private let receivedCounts = Mutex<[UInt64: Int]>([:])
    private let decided = Atomic<Int>(0)
    /// Calls for one connection that overlapped another call for the same connection.
    private let overlaps = Atomic<Int>(0)
    private let busy = Mutex<Set<UInt64>>([])

    init(decisionDelay: Int = 0) {
        self.decisionDelay = decisionDelay
    }

    func shouldUpgrade(_ head: HTTPRequestHead) -> Bool { head.path.hasPrefix("/ws") }

    func accept(_ connection: WebSocketConnection) -> WebSocketDecision {
        enter(connection)
        defer { leave(connection) }
        if decisionDelay > 0 { usleep(UInt32(decisionDelay * 1000)) }
        decided.add(1, ordering: .relaxed)
        if connection.head.headers["authorization"] == "Bearer deny" {
            return .refuse(WebSocketClose(code: 4403, reason: "forbidden"))
        }
        connections.withLock { $0[connection.id] = connection }
        return .accept
    }

    func received(_ message: WebSocketMessage, on connection: WebSocketConnection) {
        enter(connection)
        defer { leave(connection) }
        receivedCounts.withLock { $0[connection.id, default: 0] += 1 }
        if case .text(let text) = message, text.hasPrefix("close:") {
            let parts = text.split(separator: ":", maxSplits: 2).map(String.init)
            connection.close(WebSocketClose(code: Int(parts[1])!, reason: parts.count > 2 ? parts[2] : ""))
            return
        }
        switch message {
        case .text(let text): connection.send(text: text)
        case .binary(let bytes): connection.send(binary: bytes)
        }
    }

    func closed(_ connection: WebSocketConnection, with close: WebSocketClose) {
        enter(connection)
        defer { leave(connection) }
        closes.withLock { $0[connection.id] = close }
    }

    var decisions: Int { decided.load(ordering: .relaxed) }
    var overlappingCalls: Int { overlaps.load(ordering: .relaxed) }
    var accepted: [WebSocketConnection] { connections.withLock { Array($0.values) } }
    func connection(withQuery query: String) -> WebSocketConnection? {
        connections.withLock { $0.values.first { $0.head.query == query } }
    }
    func close(of id: UInt64) -> WebSocketClose? { closes.withLock { $0[id] } }
    func receivedCount(_ id: UInt64) -> Int { receivedCounts.withLock { $0[id] ?? 0 } }

    private func enter(_ connection: WebSocketConnection) {
        let inserted = busy.withLock { $0.insert(connection.id).inserted }
        if !inserted { overlaps.add(1, ordering: .relaxed) }
    }

    private func leave(_ connection: WebSocketConnection) {
        _ = busy.withLock { $0.remove(connection.id) }
    }
}

/// WebSocket framing over `RawHTTPClient`, for peers `WebSocketClient` cannot imitate: one that
/// never reads, never answers pings, or sends hand-made fragments.
extension RawHTTPClient {
    struct Frame {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// Sends the upgrade request and reads the 101.
    func upgrade(path: String, headers: String = "") throws {
        try send("GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(headers)\r\n")
        let response = try readResponse(expectBody: false)
        guard response.status == 101 else { throw Failure(description: "upgrade answered \(response.status)") }
    }

    /// Sends one masked frame (opcode 1 text, 2 binary, 0 continuation, 8 close, 10 pong).
    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try send(frame)
    }

    /// Reads one (unmasked, server-sent) frame.
    func readFrame() throws -> Frame {
        let head = try read(count: 2)
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            length = try read(count: 2).reduce(0) { $0 << 8 | Int($1) }
        } else if length == 127 {
            length = try read(count: 8).reduce(0) { $0 << 8 | Int($1) }
        }
        return Frame(fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0F, payload: try read(count: length))
    }
}

func wsURL(_ server: HTTPServer, _ pathAndQuery: String = "/ws") -> URL {
    URL(string: "ws://127.0.0.1:\(server.port)\(pathAndQuery)")!
}
