import CWebSockets
import Glibc

/// Writing responses: collecting worker results, headers, chunked body writes, keep-alive
/// (service thread).
extension ServiceLoop {
    /// `LWS_CALLBACK_EVENT_WAIT_CANCELLED`: workers finished responses (or shutdown was asked).
    /// Takes the whole batch under one lock.
    func serviceWoken() {
        completions.takeAll(into: &batch, attention: &attention)
        for completion in batch {
            if let admission = completion.admission {
                guard let connection = connections[completion.connectionID], connection.requestID == completion.requestID,
                      connection.phase == .admitting else {
                    counters.requestEnded()
                    continue
                }
                switch admission {
                case .admitted(let holder): admissionDecided(connection, .admitted(holder: holder))
                case .refused: admissionDecided(connection, .refused(completion.response))
                }
                continue
            }
            guard let connection = connections[completion.connectionID],
                  connection.requestID == completion.requestID,
                  connection.phase == .awaitingResponse else {
                // The connection closed while the responder worked: nothing to write to.
                counters.requestEnded()
                continue
            }
            startResponse(connection, completion.response)
        }
        batch.removeAll(keepingCapacity: true)
        for connectionID in attention {
            attend(connectionID: connectionID)
        }
        attention.removeAll(keepingCapacity: true)
        advanceShutdown()
    }

    /// Queues `response` on the connection and (unless the caller writes at once) asks lws
    /// for a writeable callback.
    func startResponse(_ connection: Connection, _ response: HTTPResponse, requestWriteable: Bool = true) {
        let status = response.status
        let bodiless = connection.isHeadRequest || (100..<200).contains(status) || status == 204 || status == 304
        connection.phase = .responding
        var outgoing = OutgoingResponse(response: response, sendsBody: !bodiless)
        if !bodiless, let file = response.file {
            let (id, completions) = (connection.id, completions)
            outgoing.file = FileReader(body: file, chunkSize: scratchCapacity, ready: { completions.attention(id) })
        }
        connection.outgoing = outgoing
        // The write is asked for before reading resumes (decisions E40): lws' libev plugin
        // watches each direction with its own watcher, and of one socket's ready watchers
        // libev calls the one started last after the others. So a FIN the client sent after its
        // request is read, and the connection closed, only after the write callback has run.
        if requestWriteable {
            lws_callback_on_writable(connection.wsi)
        }
        if connection.receivePaused {
            // lws 4.1's h1 handler ignores POLLOUT too while rx is flow-controlled, so the
            // writeable callback would never come. The price: should lws hold pipelined bytes
            // read ahead, it offers them to the connection again on every service pass (without
            // waiting in poll) until the transaction completes, raising a repeated
            // HTTP_BODY_COMPLETION after a body; `bodyCompleted` ignores those.
            connection.receivePaused = false
            lws_rx_flow_control(connection.wsi, 1)
        }
    }

    /// `LWS_CALLBACK_HTTP_WRITEABLE`: writes the headers and/or the next body chunk.
    ///
    /// Each call hands lws at most one scratch buffer (`writeChunkSize` bytes). lws sends what
    /// the socket takes and keeps the rest buffered, flushing it before calling here again, so
    /// a large body goes out over many callbacks without holding more than one chunk extra.
    func writeable(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connection(for: wsi), connection.phase == .responding,
              var outgoing = connection.outgoing else { return 0 }
        if outgoing.finalWritten {
            return finishResponse(connection)
        }

        let start = scratch + preamble
        var length = 0
        if !outgoing.headersWritten {
            guard let headerLength = writeHeaders(connection, outgoing, into: start) else { return -1 }
            outgoing.headersWritten = true
            length = headerLength
        }
        let bodyLength = outgoing.response.bodyLength
        if outgoing.sendsBody, let file = outgoing.file {
            if length < scratchCapacity && outgoing.bodyOffset < bodyLength {
                switch file.take(into: start + length, max: scratchCapacity - length) {
                case .copied(let count):
                    length += count
                    outgoing.bodyOffset += count
                case .pending where length == 0:
                    awaitFile(connection, outgoing)
                    return 0
                case .pending:
                    break
                case .failed:
                    // Its content-length is out: the client must see the answer cut short.
                    return -1
                }
            }
        } else if outgoing.sendsBody {
            let body = outgoing.response.body
            let take = min(scratchCapacity - length, body.count - outgoing.bodyOffset)
            if take > 0 {
                body.withUnsafeBufferPointer { bytes in
                    (start + length).update(from: bytes.baseAddress! + outgoing.bodyOffset, count: take)
                }
                length += take
                outgoing.bodyOffset += take
            }
        }
        let isLast = !outgoing.sendsBody || outgoing.bodyOffset == bodyLength
        // On HTTP/1 both kinds go out as they are; FINAL marks the end of the transaction.
        let kind = isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
        if lws_write(wsi, start, length, kind) < length {
            return -1
        }
        outgoing.handed += length
        let stalled = lws_partial_buffered(wsi) != 0
        if isLast && !stalled {
            return finishResponse(connection)
        }
        // More body to go, or lws still holds the tail: come back when the socket drains, with
        // reading paused meanwhile (E39): input the client sent after its request (pipelined
        // bytes, a FIN) otherwise keeps lws' loop from waiting while it waits for POLLOUT.
        stallWrites(connection)
        outgoing.finalWritten = isLast
        connection.outgoing = outgoing
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.idleTimeout))
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Nothing of the response's file is read yet: reading is paused (as between writes,
    /// E39) until `fileReady`.
    private func awaitFile(_ connection: Connection, _ outgoing: OutgoingResponse) {
        connection.outgoing = outgoing
        connection.awaitingFile = true
        lws_rx_flow_control(connection.wsi, Self.pauseNow)
    }

    /// The response's file has a chunk read: write it, unless the socket is full (the loop
    /// resumes a stalled writer itself once it can take more).
    func fileReady(_ connection: Connection) {
        guard connection.awaitingFile, connection.phase == .responding else { return }
        connection.awaitingFile = false
        guard !connection.writeStalled else { return }
        // Write first, then read (decisions E40).
        lws_callback_on_writable(connection.wsi)
        lws_rx_flow_control(connection.wsi, Self.resumeNow)
    }

    /// The response is completely handed over: keep the connection for the next request or
    /// close it. Returning -1 makes lws close it.
    private func finishResponse(_ connection: Connection) -> Int32 {
        counters.requestEnded()
        if connection.writeStalled {
            connection.writeStalled = false
            lws_rx_flow_control(connection.wsi, Self.resumeNow)
        }
        let close = willClose(connection)
        let outstanding = connection.bodyOutstanding
        let lingers = outstanding > 0 && outstanding <= Self.discardAllowance
        releaseBody(connection)
        connection.resetRequest()
        if draining { checkDrained() }
        if close {
            guard lingers else { return -1 }
            // A lingering close (decision E15). Closing with unread input makes the kernel send
            // a reset, which can destroy the answer before the client reads it; and a client
            // that is still sending the body it announced (it ignored `expect`, or, like curl,
            // sent it once its one-second wait for `100 Continue` was over) fails its send with
            // a broken pipe before it reads the answer. So: send FIN after the answer (the
            // client sees the close at once), then read what it sends (lws calls back with it)
            // and drop it, up to `discardAllowance` bytes. A client that is not sending after
            // all gets `lingerTimeout` to start.
            shutdown(lws_get_socket_fd(connection.wsi), Int32(SHUT_WR))
            connection.phase = .discardingBody
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_HTTP_CONTENT,
                            Int32(min(configuration.idleTimeout, Self.lingerTimeout)))
            // lws restarts that timeout with every byte read: the timer ends lingering whatever.
            lws_set_timer_usecs(connection.wsi, lws_usec_t(Self.discardDeadline) * 1_000_000)
            return 0
        }
        guard lws_http_transaction_completed(connection.wsi) == 0 else { return -1 }
        // Whatever lws parses next without reading the socket again comes from its read-ahead.
        let mark = ReadAhead.mark(connection.wsi)
        connection.readMark = .taken(mark.read)
        if mark.inputWaiting {
            holdInputUntilWritable(connection)
        }
        if mark.unsent > 0 {
            // The client is still reading this response: the wait for its next request starts
            // with the idle timeout, not the keep-alive one (5 s), or a client reading the tail
            // slowly finds the connection closed when it asks again, and a request it sends
            // before the end meets a reset that destroys the rest of the answer (E45).
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_HTTP_KEEPALIVE_IDLE, Int32(configuration.idleTimeout))
        }
        connection.headPending = true
        armHeadTimer(connection)
        return 0
    }

    private func willClose(_ connection: Connection) -> Bool {
        connection.closeAfterResponse || !connection.keepAlive || draining
    }

    /// Builds the status line and headers at `start` with lws' helpers; the byte count, or
    /// `nil` if they do not fit in the scratch buffer.
    private func writeHeaders(_ connection: Connection, _ outgoing: OutgoingResponse,
                              into start: UnsafeMutablePointer<UInt8>) -> Int? {
        let wsi = connection.wsi
        let response = outgoing.response
        let end = start + scratchCapacity
        var cursor: UnsafeMutablePointer<UInt8>? = start
        let status = (100...999).contains(response.status) ? response.status : 500
        guard lws_add_http_header_status(wsi, UInt32(status) | UInt32(LWSAHH_FLAG_NO_SERVER_NAME),
                                         &cursor, end) == 0 else { return nil }
        for (name, value) in response.headers {
            if HTTPHeaders.namesMatch(name, "content-length") || HTTPHeaders.namesMatch(name, "transfer-encoding") {
                continue
            }
            if HTTPHeaders.namesMatch(name, "connection") {
                if value.lowercased().contains("close") { connection.closeAfterResponse = true }
                continue
            }
            guard add(name: name, value: value, wsi: wsi, cursor: &cursor, end: end) else { return nil }
        }
        if status >= 200 && status != 204 && status != 304 {
            guard lws_add_http_header_content_length(wsi, UInt64(response.bodyLength), &cursor, end) == 0 else {
                return nil
            }
        }
        if willClose(connection) {
            guard add(name: "connection", value: "close", wsi: wsi, cursor: &cursor, end: end) else { return nil }
        } else if !connection.isHTTP11 {
            guard add(name: "connection", value: "keep-alive", wsi: wsi, cursor: &cursor, end: end) else { return nil }
        }
        guard lws_finalize_http_header(wsi, &cursor, end) == 0, let cursor else { return nil }
        return cursor - start
    }

    /// Appends one header; a name or value that could split the header block is skipped.
    private func add(name: String, value: String, wsi: OpaquePointer,
                     cursor: inout UnsafeMutablePointer<UInt8>?, end: UnsafeMutablePointer<UInt8>) -> Bool {
        let nameBytes = name.utf8
        guard !nameBytes.isEmpty, nameBytes.count <= Self.headerNameCapacity,
              nameBytes.allSatisfy(Self.isTokenCharacter),
              !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { return true }
        var index = 0
        for byte in nameBytes {
            headerName[index] = byte
            index += 1
        }
        headerName[index] = UInt8(ascii: ":")
        headerName[index + 1] = 0
        var value = value
        return value.withUTF8 { bytes in
            lws_add_http_header_by_name(wsi, headerName, bytes.baseAddress ?? UnsafePointer(headerName),
                                        Int32(bytes.count), &cursor, end) == 0
        }
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
