import CWebSockets
import Foundation

/// Receiving request bodies: the in-memory budget and spool slots, admission of a head before
/// its body (`HTTPBodyPolicy.admitFirst`), spooling to a file, and the body callbacks
/// (service thread).
extension ServiceLoop {
    /// Takes a spool slot or reserves `length` bytes of the in-memory budget, charged to
    /// `holder` as well; answers 503 (the server's budget is spent) or 429 (the holder's share
    /// is) and returns `false` when none is left.
    func reserveBody(_ connection: Connection, length: Int, policy: HTTPBodyPolicy, holder: String) -> Bool {
        var share = holders[holder] ?? HolderShare()
        if policy.spooled {
            guard counters.spooledBodies < configuration.maxSpooledBodies else {
                reject(connection, status: 503, reason: "Too many large request bodies are being received; retry shortly.")
                return false
            }
            guard share.spooledBodies < configuration.maxSpooledBodiesPerHolder else {
                reject(connection, status: 429, reason: "You already have \(share.spooledBodies) large request bodies being received "
                       + "(at most \(configuration.maxSpooledBodiesPerHolder) at once); retry when one is done.")
                return false
            }
            share.spooledBodies += 1
            connection.holdsSpoolSlot = true
            counters.spoolStarted()
        } else {
            guard counters.bufferedBodyBytes + length <= configuration.maxBufferedBodyBytes else {
                reject(connection, status: 503, reason: "Too many request bodies are being received; retry shortly.")
                return false
            }
            guard share.bufferedBytes + length <= configuration.maxBufferedBodyBytesPerHolder else {
                reject(connection, status: 429, reason: "You already have \(share.bufferedBytes) bytes of request bodies being received "
                       + "(at most \(configuration.maxBufferedBodyBytesPerHolder) at once); retry when they are done.")
                return false
            }
            share.bufferedBytes += length
            connection.reservedBodyBytes = length
            counters.bodyBytesHeld(length)
        }
        holders[holder] = share
        connection.bodyHolder = holder
        return true
    }

    /// The holder of a body no responder named: the client's address (behind a trusted proxy,
    /// the one `X-Forwarded-For` names, not the proxy's).
    func addressHolder(_ connection: Connection) -> String {
        "address " + IPAddress.limitKey(connection.head?.remoteAddress ?? connection.remoteAddress)
    }

    /// Gives back what `reserveBody` took, and drops a spool no request received.
    func releaseBody(_ connection: Connection) {
        if let holder = connection.bodyHolder, var share = holders[holder] {
            share.bufferedBytes -= connection.reservedBodyBytes
            if connection.holdsSpoolSlot { share.spooledBodies -= 1 }
            holders[holder] = share.bufferedBytes <= 0 && share.spooledBodies <= 0 ? nil : share
        }
        connection.bodyHolder = nil
        if connection.reservedBodyBytes > 0 {
            counters.bodyBytesReleased(connection.reservedBodyBytes)
            connection.reservedBodyBytes = 0
        }
        if connection.holdsSpoolSlot {
            counters.spoolEnded()
            connection.holdsSpoolSlot = false
        }
        connection.spool?.discard()
        connection.spool = nil
    }

    /// Pauses reading and asks a worker whether the body is wanted (`HTTPResponder.admission`),
    /// unless the responder can tell from memory (`quickAdmission`, decisions E22). Nothing is
    /// reserved until it is: a head waiting here holds no share of the budget.
    func admit(_ connection: Connection) -> Int32 {
        guard let head = connection.head else { return -1 }
        if let decision = responder.quickAdmission(for: head) {
            counters.admitted(fromMemory: true)
            admissionDecided(connection, decision)
            return 0
        }
        counters.admitted(fromMemory: false)
        guard let workers else {
            // Benchmark mode: decide right here.
            admissionDecided(connection, responder.admission(for: head))
            return 0
        }
        connection.phase = .admitting
        lws_set_timeout(connection.wsi, NO_PENDING_TIMEOUT, 0)
        lws_rx_flow_control(connection.wsi, 0)
        connection.receivePaused = true
        let job = WorkerPool.Job(connectionID: connection.id, requestID: connection.requestID, request: HTTPRequest(head: head))
        if !workers.submitAdmission(job) {
            reject(connection, status: 503, reason: "Too many requests are queued.")
        }
        return 0
    }

    /// A worker's admission decision for `connection` (service thread): the refusal is the
    /// answer; an admitted body is reserved for its holder, then read.
    func admissionDecided(_ connection: Connection, _ decision: HTTPAdmission) {
        switch decision {
        case .refused(let refusal):
            connection.closeAfterResponse = true
            startResponse(connection, refusal)
            return
        case .admitted(let holder):
            guard reserveBody(connection, length: connection.bodyLength, policy: connection.bodyPolicy,
                              holder: holder ?? addressHolder(connection)) else { return }
        }
        if connection.receivePaused {
            connection.receivePaused = false
            lws_rx_flow_control(connection.wsi, 1)
        }
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(configuration.idleTimeout))
        let early = connection.body
        connection.body = []
        beginBody(connection)
        if !early.isEmpty {
            early.withUnsafeBytes { receive(connection, $0) }
        }
        // lws raises the end of an empty body only for POST: any other method admitted with
        // `content-length: 0` has its whole body now (it waited for the 408 before; decisions E24).
        let emptyNotPost = connection.bodyLength == 0 && connection.head?.method != "POST"
        if (connection.bodyCompleteEarly || emptyNotPost) && connection.phase == .receivingBody {
            _ = dispatchIfAccepting(connection)
        }
    }

    /// Starts collecting the body: a spool file or memory, and `100 Continue` if asked for.
    func beginBody(_ connection: Connection) {
        connection.phase = .receivingBody
        connection.bodyBegan = .now
        if connection.bodyPolicy.spooled {
            let id = connection.id
            let completions = completions
            let counters = counters
            connection.spool = BodySpool(directory: configuration.spoolDirectory ?? Self.temporaryDirectory,
                                         window: configuration.spoolWindow,
                                         onDrained: { completions.attention(id) },
                                         released: { counters.bodyBytesReleased($0) })
        } else {
            connection.body.reserveCapacity(connection.bodyLength)
        }
        if connection.bodyLength > 0 {
            // The body's deadline (`HTTPServerConfiguration.bodyMinimumSeconds`): lws' own
            // timeout restarts with every byte, so a trickle would hold the reservation forever.
            lws_set_timer_usecs(connection.wsi, lws_usec_t(configuration.bodyDeadline(length: connection.bodyLength)) * 1_000_000)
        }
        if connection.expectsContinue && connection.bodyLength > 0 {
            writeContinue(connection.wsi)
            // Told to go on, the client sends the body: an answer before its end lingers for the
            // rest like any other (`finishResponse`), or the client meets a reset mid-body.
            connection.expectsContinue = false
        }
    }

    /// The body's deadline passed before all of it arrived: 408, and the connection closes
    /// once the answer is out (not lingering for the rest), releasing its reservation.
    func bodyDeadlinePassed(_ connection: Connection) {
        let seconds = configuration.bodyDeadline(length: connection.bodyLength)
        connection.bodyOutstanding = 0
        reject(connection, status: 408, reason: "The request body (\(connection.bodyLength) bytes) did not arrive within \(seconds) s; "
               + "a body may take \(configuration.bodyMinimumSeconds) s or \(configuration.bodyMinimumRate >> 10) KiB/s, whichever is longer "
               + "(\(connection.bodyReceived) bytes arrived).")
    }

    static var temporaryDirectory: String {
        let value = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
        return value.isEmpty ? "/tmp" : value
    }

    /// `LWS_CALLBACK_HTTP_BODY`: a piece of body.
    func bodyArrived(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let connection = connection(for: wsi) else { return -1 }
        connection.bodyOutstanding -= bytes.count
        switch connection.phase {
        case .admitting:
            // What lws had read with the head (one read at most: reading is paused).
            connection.body.append(contentsOf: bytes)
        case .receivingBody:
            receive(connection, bytes)
        default:
            break
        }
        return 0
    }

    func receive(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        if connection.bodyReceived + bytes.count > connection.bodyLimit {
            reject(connection, status: 413, reason: "The body is larger than \(connection.bodyLimit) bytes.")
            return
        }
        connection.bodyReceived += bytes.count
        guard let spool = connection.spool else {
            connection.body.append(contentsOf: bytes)
            return
        }
        counters.bodyBytesHeld(bytes.count)
        if spool.append(bytes) && !connection.receivePaused {
            // The disk is behind: stop reading until the spool has written half its window.
            connection.receivePaused = true
            lws_rx_flow_control(connection.wsi, 0)
        }
    }

    /// The spool of `connection` has drained below half its window: read again.
    func spoolDrained(_ connection: Connection) {
        guard connection.phase == .receivingBody, connection.receivePaused else { return }
        connection.receivePaused = false
        lws_rx_flow_control(connection.wsi, 1)
    }

    /// `LWS_CALLBACK_HTTP_BODY_COMPLETION`: lws has delivered all the body it expected.
    func bodyCompleted(_ wsi: OpaquePointer) -> Int32 {
        guard let connection = connection(for: wsi) else { return -1 }
        if connection.phase == .discardingBody {
            return -1
        }
        if connection.phase == .admitting {
            connection.bodyCompleteEarly = true
            return 0
        }
        guard connection.phase == .receivingBody else { return 0 }
        return dispatchIfAccepting(connection)
    }

}
