import CWebSockets

/// WebSocket connections on the HTTP server's service thread: the upgrade, frames in and out,
/// closes. The same wsi goes on from HTTP to WebSocket, so the `Connection` (and its id) stays.
extension ServiceLoop {
    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`: the head of a `GET` asking for `Upgrade: websocket`
    /// (or `h2c`). Returning -1 hangs up without answering; 0 lets lws complete the handshake.
    func confirmUpgrade(_ wsi: OpaquePointer, protocolName: UnsafeMutableRawPointer?) -> Int32 {
        guard let webSocketResponder, !draining, let connection = connection(for: wsi),
              let protocolName, strcasecmp(protocolName.assumingMemoryBound(to: CChar.self), "websocket") == 0,
              let facts = headReader.read(wsi, peerAddress: connection.remoteAddress),
              facts.head.method == "GET", !facts.splitPath, webSocketResponder.shouldUpgrade(facts.head) else { return -1 }
        connection.head = facts.head
        // No longer waits for a head: its deadline entry is stale (as in `requestHeadArrived`).
        connection.headPending = false
        connection.headArming = 0
        return 0
    }

    /// `LWS_CALLBACK_ESTABLISHED`: the 101 is written. The responder decides on a worker.
    func webSocketEstablished(_ wsi: OpaquePointer) -> Int32 {
        guard let webSocketResponder, let connection = connection(for: wsi), let head = connection.head else {
            return -1
        }
        let channel = WebSocketChannel(id: connection.id, wsi: wsi, configuration: configuration.webSocket,
                                       policy: .closeSlowConsumer, notifier: completions, counters: counters)
        let mailbox = WebSocketMailbox(connection: WebSocketConnection(head: head, channel: channel),
                                       responder: webSocketResponder,
                                       backlogLimit: configuration.webSocket.receiveBacklogBytes)
        connection.phase = .webSocket
        connection.webSocket = mailbox
        counters.webSocketOpened()
        deliver(.open, to: connection)
        return 0
    }

    /// `LWS_CALLBACK_RECEIVE`: part of a frame.
    func webSocketReceived(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let connection = connection(for: wsi), let mailbox = connection.webSocket else { return -1 }
        switch mailbox.connection.channel.received(bytes) {
        case .incomplete:
            return 0
        case .tooBig:
            return -1
        case .message(let message):
            deliver(.message(message), to: connection)
            return 0
        }
    }

    /// `LWS_CALLBACK_SERVER_WRITEABLE`.
    func webSocketWriteable(_ wsi: OpaquePointer) -> Int32 {
        guard let mailbox = connection(for: wsi)?.webSocket else { return 0 }
        return mailbox.connection.channel.writeable(scratch: scratch, preamble: preamble, capacity: scratchCapacity)
    }

    /// `LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`: the peer's close frame; 0 lets lws answer it.
    func webSocketPeerClosing(_ wsi: OpaquePointer, _ payload: UnsafeRawBufferPointer) -> Int32 {
        connection(for: wsi)?.webSocket?.connection.channel.peerInitiatedClose(payload)
        return 0
    }

    /// `LWS_CALLBACK_CLOSED`: the WebSocket is gone (any cause); `WSI_DESTROY` follows.
    func webSocketClosed(_ wsi: OpaquePointer) {
        guard let connection = connection(for: wsi), let mailbox = connection.webSocket else { return }
        let close = mailbox.connection.channel.detach()
        counters.webSocketClosed()
        deliver(.closed(close), to: connection)
        connection.webSocket = nil
        checkDrained()
    }

    /// A WebSocket asked for attention: output queued, a close asked, or its backlog halved.
    func attend(connectionID: UInt64) {
        guard let connection = connections[connectionID] else { return }
        guard let mailbox = connection.webSocket else {
            // Not a WebSocket: a response's file with a chunk read, or a spooled body that may
            // be read again.
            if connection.awaitingFile {
                fileReady(connection)
            } else {
                spoolDrained(connection)
            }
            return
        }
        mailbox.connection.channel.attend()
        if connection.receivePaused && !mailbox.holdsReceive {
            connection.receivePaused = false
            lws_rx_flow_control(connection.wsi, 1)
        }
    }

    /// Shutdown: every WebSocket is closed with 1001, dropping what is queued.
    func closeWebSockets() {
        for connection in connections.values {
            connection.webSocket?.connection.channel.requestClose(
                WebSocketClose(code: WebSocketClose.goingAway, reason: "server shutting down"), immediate: true)
        }
    }

    private func deliver(_ event: WebSocketMailbox.Event, to connection: Connection) {
        guard let mailbox = connection.webSocket else { return }
        let (schedule, pause) = mailbox.post(event)
        if pause && !connection.receivePaused {
            // The responder is behind: stop reading so TCP slows the peer down. `attend` resumes.
            connection.receivePaused = true
            lws_rx_flow_control(connection.wsi, 0)
        }
        guard schedule else { return }
        if let workers {
            workers.submit(mailbox)
        } else {
            // Benchmark mode (`inlineResponder`): run the responder right here.
            var resume = false
            while true {
                let turn = mailbox.run()
                resume = resume || turn.resume
                if !turn.more { break }
            }
            if resume { attend(connectionID: connection.id) }
        }
    }
}
