import Glibc
import CWebSockets

/// Answers for input libwebsockets refuses before there is a request to hand over (service
/// thread). lws 4.1 parses the head itself and offers two ways to learn it gave up:
///
/// - A request line whose method it does not know (any garbage, a TLS ClientHello, the
///   HTTP/2 preface, `PROPFIND`, `CONNECT`): with `LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_
///   ACCEPT_CONFIG` lws turns the connection into a raw socket and hands us the bytes it read
///   (`LWS_CALLBACK_RAW_ADOPT`, then `LWS_CALLBACK_RAW_RX`). Without it lws writes a bare
///   `HTTP/1.0 403` itself.
/// - A head that does not end (a header line without a colon: lws keeps reading it as a
///   header name) raises nothing; a deadline per connection (`HeadDeadlines`, armed when a
///   head is awaited) answers it 400 after `headTimeout`.
///
/// Both answers are written here, with `connection: close`, using the responder's error
/// rendering. What lws 4.1 cannot be made to answer: heads its parser fails on (more than
/// `maxHeaderBytes` of request line and headers, more header fields or query arguments than
/// its fragment table holds, `%00` in the path). `lws_parse()` returns `LPR_FAIL`, and lws
/// drops the header table and shuts the socket down (`shutdown(SHUT_WR)`) from inside the
/// read, with no user callback in between (`HTTP_DROP_PROTOCOL` is raised only once a
/// protocol was bound, which happens after a head is parsed; `CLOSED_HTTP` comes after the
/// shutdown); those connections are closed without a word.
extension ServiceLoop {
    /// `LWS_CALLBACK_RAW_RX` on a connection lws gave up parsing as HTTP: answer once, close.
    func rawReceived(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let connection = connection(for: wsi) else { return -1 }
        if connection.rawAnswered { return 0 }
        connection.rawAnswered = true
        let (status, reason, allow) = Self.classifyRequestLine(bytes)
        var response = responder.errorResponse(status: status, reason: reason, head: nil)
        if let allow { response.headers.append(("allow", allow)) }
        let text = Self.serialize(response)
        let start = scratch + preamble
        let count = min(text.count, scratchCapacity)
        text.withUnsafeBufferPointer { start.update(from: $0.baseAddress!, count: count) }
        // LWS_WRITE_RAW is a macro for LWS_WRITE_HTTP: plain bytes, lws buffers what the socket does not take.
        guard lws_write(wsi, start, count, LWS_WRITE_HTTP) == count else { return -1 }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// `LWS_CALLBACK_RAW_WRITEABLE`: the answer is out; drop what the client sent and close.
    func rawWriteable(_ wsi: OpaquePointer) -> Int32 {
        ReadAhead.discardUnread(wsi, buffer: scratch, capacity: scratchCapacity, limit: Self.discardAllowance)
        return -1
    }

    /// Arms the head deadline: `LWS_CALLBACK_TIMER` on this connection after `headTimeout`, if
    /// it still waits for a head then (`HeadDeadlines`, `expireHeadDeadlines`).
    func armHeadTimer(_ connection: Connection) {
        let kind: HeadDeadlines.Kind = if case .noTransactionYet = connection.readMark { .first } else { .next }
        connection.headArming = headDeadlines.arm(connection.id, seconds: configuration.headTimeout, kind: kind)
        connection.headDeadlinePassed = false
    }

    /// Each turn of the loop (service thread): a connection whose head deadline has passed while
    /// it still waits for a head gets its lws timer due at once (which goes at the front of lws'
    /// sorted list, so costs no walk), and `timerFired` answers it.
    func expireHeadDeadlines() {
        headDeadlines.expire { entry in
            guard let connection = connections[entry.connection], connection.headArming == entry.arming,
                  connection.phase == .idle, connection.headPending else { return }
            connection.headDeadlinePassed = true
            lws_set_timer_usecs(connection.wsi, 1)
        }
    }

    /// `LWS_CALLBACK_TIMER`: the connection's one lws timer, due for the head deadline
    /// (`expireHeadDeadlines`), the body deadline (`beginBody`) or the end of lingering after an
    /// error answer; which one by the connection's phase.
    func timerFired(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connection(for: wsi) else { return 0 }
        switch connection.phase {
        case .idle:
            // Another phase's timer that outlived it is not the head's.
            guard connection.headDeadlinePassed else { return 0 }
            connection.headDeadlinePassed = false
            return headTimerFired(connection)
        case .receivingBody:
            bodyDeadlinePassed(connection)
            return 0
        case .discardingBody:
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            return 0
        default:
            return 0
        }
    }

    /// The head deadline passed. A head begun and still not delivered (lws waits for a line
    /// it cannot end, or the client stalls) is answered 400 and the connection closed; an idle
    /// keep-alive connection is left to its own timeout.
    func headTimerFired(_ connection: Connection) -> Int32 {
        let wsi = connection.wsi
        guard connection.headPending else { return 0 }
        let mark: UInt64? = switch connection.readMark {
        case .noTransactionYet: 0
        case .taken(let value): value
        }
        if ReadAhead.nothingReadSince(mark, wsi) {
            armHeadTimer(connection)
            return 0
        }
        connection.headPending = false
        let reason = "The request head was not complete within \(configuration.headTimeout) s (a header line without a colon, "
            + "or a client that stopped sending)."
        let text = Self.serialize(responder.errorResponse(status: 400, reason: reason, head: nil))
        let start = scratch + preamble
        let count = min(text.count, scratchCapacity)
        text.withUnsafeBufferPointer { start.update(from: $0.baseAddress!, count: count) }
        _ = lws_write(wsi, start, count, LWS_WRITE_HTTP)
        // Closed once lws has flushed the answer (a non-zero return would drop it).
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        return 0
    }

    /// What a request line lws could not take asks for: 405 for a method HTTP defines that
    /// is not served (`CONNECT`, `TRACE`), 501 for a well-formed line with another method,
    /// 400 for anything else (garbage, TLS, the HTTP/2 preface).
    static func classifyRequestLine(_ bytes: UnsafeRawBufferPointer) -> (Int, String, String?) {
        let line = bytes.prefix { $0 != 0x0D && $0 != 0x0A }
        let words = line.split(separator: 0x20, omittingEmptySubsequences: false)
        let isToken = { (word: Slice<UnsafeRawBufferPointer>) in
            !word.isEmpty && word.allSatisfy { (0x41...0x5A).contains($0) || $0 == 0x2D || $0 == 0x5F }
        }
        let version = words.count == 3 ? String(decoding: words[2], as: UTF8.self) : ""
        guard words.count == 3, isToken(words[0]), version.hasPrefix("HTTP/1."), line.count < bytes.count else {
            return (400, "Not an HTTP/1.1 request (HTTP/2 and TLS are not served on this port).", nil)
        }
        let method = String(decoding: words[0], as: UTF8.self)
        let served = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
        if method == "CONNECT" || method == "TRACE" {
            return (405, "\(method) is not served; methods: \(served).", served)
        }
        return (501, "Method \(method.prefix(32)) is not implemented; methods: \(served).", served)
    }

    /// A complete HTTP/1.1 response with `connection: close`, for sockets lws no longer
    /// writes HTTP on.
    static func serialize(_ response: HTTPResponse) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\n"
        for (name, value) in response.headers where !name.lowercased().hasPrefix("content-length") && !name.lowercased().hasPrefix("connection") {
            guard !(name + value).utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { continue }
            head += "\(name): \(value)\r\n"
        }
        head += "content-length: \(response.body.count)\r\nconnection: close\r\n\r\n"
        return Array(head.utf8) + response.body
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }
}
