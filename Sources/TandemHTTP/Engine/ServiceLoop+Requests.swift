import CWebSockets

/// Receiving requests: head, body framing, hand-off to the responder (service thread).
extension ServiceLoop {
    private enum Framing {
        case none
        case length(Int)
    }

    /// `LWS_CALLBACK_HTTP`: the head is parsed. Decides how the body is framed and whether the
    /// request can be accepted at all.
    func requestHeadArrived(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connection(for: wsi) else { return -1 }
        connection.headPending = false
        // Its head deadline's entry is stale from now on (`HeadDeadlines`): a request in
        // progress must not hold the front of the queue, where a scan for a connection to close
        // starts (stop 44's fifth review: one upload on a new connection during a flood left
        // over 1,024 stale entries behind it, and no room was made for 3 s).
        connection.headArming = 0
        if connection.shed {
            // Chosen to be closed for a descriptor, but its request came first: lws' timeout
            // for the request replaced the close, so it is served (DescriptorShortage.closing).
            connection.shed = false
            shortage.closing[connection.id] = nil
        }
        if case .taken(let mark) = connection.readMark, headReader.lwsWillReadBody(wsi),
           ReadAhead.nothingReadSince(mark, wsi) {
            // A pipelined request with a body, parsed from bytes lws had read ahead: lws 4.1
            // would feed it its own head as body and then loop forever (see `ReadAhead`).
            // Refusing it here is the one safe exit: lws closes the connection, the requests
            // before it having been answered. It is not answered (nor any request behind it);
            // a pipelining client retries unanswered requests on a new connection (RFC 9112
            // section 9.3.2).
            ReadAhead.discardUnread(wsi, buffer: scratch, capacity: scratchCapacity, limit: Self.discardAllowance)
            return -1
        }
        releaseBody(connection)
        connection.resetRequest()
        connection.requestID = nextRequestID
        nextRequestID += 1
        counters.requestStarted()

        guard let facts = headReader.read(wsi, peerAddress: connection.remoteAddress) else {
            reject(connection, status: 405, reason: "Method not supported.")
            return 0
        }
        let head = facts.head
        connection.head = head
        guard !facts.splitPath else {
            reject(connection, status: 400, reason: "A raw ';' or '&' in the path is not served; percent-encode it (%3B, %26).")
            return 0
        }
        guard facts.isSupportedVersion else {
            connection.isHTTP11 = false
            reject(connection, status: 505, reason: "Only HTTP/1.1 and HTTP/1.0 are served.")
            return 0
        }
        connection.expectsContinue = facts.expectsContinue
        if case .value(let length) = facts.contentLength, facts.transferEncoding == nil {
            connection.bodyOutstanding = length
        }
        connection.keepAlive = facts.keepAlive
        connection.isHTTP11 = facts.isHTTP11
        connection.isHeadRequest = head.method == "HEAD"

        if draining {
            reject(connection, status: 503, reason: "The server is shutting down.")
            return 0
        }

        let framing: Framing
        let announcesBody = switch head.method {
        case "POST", "PUT", "PATCH": true
        default: false
        }
        switch (facts.contentLength, facts.transferEncoding) {
        case (.absent, nil):
            if announcesBody {
                guard !responder.bodyPolicy(for: head).requiresLength else {
                    reject(connection, status: 411, reason: "A content-length is required.")
                    return 0
                }
                // Taken as empty (`HTTPBodyPolicy.requiresLength`). lws 4.1 reads a POST without a
                // length as a body running to the end of the connection, so this connection cannot
                // carry another request: it closes after the answer.
                connection.closeAfterResponse = true
            }
            framing = .none
        case (.value(let length), nil):
            framing = .length(length)
        case (.malformed, nil):
            reject(connection, status: 400, reason: "Malformed content-length.")
            return 0
        case (.absent, let encoding?):
            // libwebsockets 4.1 does not de-chunk request bodies, and we do not parse HTTP
            // framing ourselves: a body must come with its length.
            guard encoding.lowercased() == "chunked" else {
                reject(connection, status: 501, reason: "Transfer-encoding '\(encoding)' is not supported.")
                return 0
            }
            reject(connection, status: 411, reason: "Chunked request bodies are not accepted; send a content-length.")
            return 0
        case (_, _?):
            reject(connection, status: 400, reason: "Both content-length and transfer-encoding given.")
            return 0
        }

        switch framing {
        case .none:
            return dispatch(connection)
        case .length(let length):
            let policy = responder.bodyPolicy(for: head)
            let limit = max(0, policy.limit)
            if length > limit {
                reject(connection, status: 413, reason: "The body is larger than \(limit) bytes.")
                return 0
            }
            // lws raises HTTP_BODY_COMPLETION for a POST with an explicit zero length, but for
            // no other method.
            if length == 0 && head.method != "POST" && !policy.admitFirst {
                return dispatch(connection)
            }
            connection.bodyLimit = limit
            connection.bodyLength = length
            connection.bodyPolicy = policy
            if policy.admitFirst {
                // Reserved once admitted, charged to the holder the responder names.
                return admit(connection)
            }
            guard reserveBody(connection, length: length, policy: policy, holder: addressHolder(connection)) else { return 0 }
            beginBody(connection)
        }
        return 0
    }

    func dispatchIfAccepting(_ connection: Connection) -> Int32 {
        if draining {
            reject(connection, status: 503, reason: "The server is shutting down.")
            return 0
        }
        return dispatch(connection)
    }

    /// Hands the complete request to the responder: inline, or queued for a worker.
    /// Called from a callback on the connection's own wsi; returns what that callback returns.
    private func dispatch(_ connection: Connection) -> Int32 {
        guard let head = connection.head else { return -1 }
        var body: [UInt8] = []
        swap(&body, &connection.body)
        let request = HTTPRequest(head: head, body: body, bodyFile: connection.spool.map(HTTPBodyFile.init))
        connection.spool = nil
        let wsi = connection.wsi
        connection.phase = .awaitingResponse

        guard let workers else {
            // Benchmark mode: answer and write right here, as lws' own examples do from
            // LWS_CALLBACK_HTTP, saving a trip through poll().
            startResponse(connection, responder.respond(to: request), requestWriteable: false)
            return writeable(wsi)
        }
        // The responder may take its time: no lws timeout while it works. And read nothing
        // more meanwhile (a pipelined request, a close): lws cannot consume it in this state
        // and would otherwise poll it in a busy loop.
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        lws_rx_flow_control(wsi, 0)
        connection.receivePaused = true
        let job = WorkerPool.Job(connectionID: connection.id, requestID: connection.requestID, request: request,
                                 brief: responder.runsBriefly(head))
        if !workers.submit(job) {
            startResponse(connection, responder.errorResponse(status: 503, reason: "Too many requests are queued.",
                                                              head: head))
        }
        return 0
    }

    /// Answers with the responder's error rendering, then closes the connection.
    func reject(_ connection: Connection, status: Int, reason: String) {
        connection.closeAfterResponse = true
        startResponse(connection, responder.errorResponse(status: status, reason: reason, head: connection.head))
    }

    /// `HTTP/1.1 100 Continue`, so clients waiting on `expect: 100-continue` (curl, hence
    /// URLSession on Linux) send the body without their one-second pause.
    func writeContinue(_ wsi: OpaquePointer) {
        let line = "HTTP/1.1 100 Continue\r\n\r\n"
        let start = scratch + preamble
        let count = line.utf8.count
        _ = line.utf8.withContiguousStorageIfAvailable { start.update(from: $0.baseAddress!, count: count) }
        _ = lws_write(wsi, start, count, LWS_WRITE_HTTP_HEADERS)
    }
}
