import Glibc
import CWebSockets

/// Responses a client does not read (service thread; decisions E39).
///
/// Between the writes of a response, lws waits for `POLLOUT` (and when the socket took only
/// part of a write, keeps the rest). Should the client have sent anything after its request,
/// lws 4.1.6 does not wait meanwhile: bytes it read ahead (a pipelined request) are offered
/// to the connection again on every pass of its loop without waiting in `poll`, and the
/// connection, in the middle of a transaction, takes none of them; unread bytes or a FIN in
/// the socket keep `POLLIN` set. Two pipelined `GET /openapi.json` on one connection whose
/// client never read kept the service thread at 100% of a core until lws' timeout 30 s later
/// (stop 46's first review), and so did an 8 MB download read slowly with one byte or a FIN
/// sent after it, for as long as the download lasted (its second review). So between the
/// writes of a response a connection's reading is paused (`lws_rx_flow_control`), which
/// takes it out of those passes and out of `POLLIN`. lws 4.1's h1 handler also
/// ignores `POLLOUT` while reading is paused, so the loop looks at the paused sockets itself,
/// at most every `stalledWritersInterval`, and resumes each that can take more: lws then
/// flushes what it holds and calls for the rest of the response.
extension ServiceLoop {
    static let stalledWritersInterval = Duration.milliseconds(1)
    /// Applied to the poll set at once: lws' header asks for it when the change is made from
    /// outside a callback on the connection, as the loop's look at paused sockets is.
    static let pauseNow = Int32(LWS_RXFLOW_REASON_FLAG_PROCESS_NOW)
    static let resumeNow = Int32(LWS_RXFLOW_REASON_FLAG_PROCESS_NOW) | 1

    /// A write of `connection`'s response is done and more is to come (or lws holds part of it).
    func stallWrites(_ connection: Connection) {
        guard !connection.writeStalled else { return }
        connection.writeStalled = true
        connection.stalledSince = .now
        lws_rx_flow_control(connection.wsi, Self.pauseNow)
        if !connection.writeWatched {
            connection.writeWatched = true
            stalledWriters.append(connection.id)
        }
    }

    /// A transaction completed with the connection kept, and the client has sent more (a
    /// pipelined request, a FIN) that lws has not read. lws now waits for `POLLOUT` before it
    /// parses anything (its `LRS_DEFERRING_ACTION`) and reads nothing meanwhile, so while the
    /// socket cannot take more the pending input kept `POLLIN` set and the loop from waiting:
    /// 30,000 pipelined `GET /healthz` never read kept a core busy for 5 s, until the head
    /// deadline (decisions E41). Reading is paused instead until the socket can take more.
    func holdInputUntilWritable(_ connection: Connection) {
        var descriptor = pollfd(fd: lws_get_socket_fd(connection.wsi), events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, 0) == 0 else { return }
        stallWrites(connection)
    }

    /// After a turn of the loop: resumes the paused connections whose sockets take more now
    /// (or failed: lws then finds out and closes them), and pauses again those responding whose
    /// sockets are full again (lws flushes what it held without calling back, so `writeable`
    /// cannot see it); forgets connections whose response is done.
    func resumeStalledWriters() {
        let now = ContinuousClock.now
        guard now - stalledWritersChecked >= Self.stalledWritersInterval else { return }
        stalledWritersChecked = now
        var writing: [Connection] = []
        for connection in stalledWriters.compactMap({ connections[$0] }) {
            if connection.phase == .responding || connection.writeStalled {
                writing.append(connection)
            } else {
                connection.writeWatched = false
            }
        }
        stalledWriters = writing.map(\.id)
        var descriptors = writing.map { pollfd(fd: lws_get_socket_fd($0.wsi), events: Int16(POLLOUT), revents: 0) }
        guard !descriptors.isEmpty, poll(&descriptors, nfds_t(descriptors.count), 0) >= 0 else { return }
        for (connection, descriptor) in zip(writing, descriptors) {
            if descriptor.revents != 0 {
                guard connection.writeStalled else { continue }
                connection.writeStalled = false
                connection.stalledSince = nil
                // Write first, then read (see `startResponse`; decisions E40).
                lws_callback_on_writable(connection.wsi)
                lws_rx_flow_control(connection.wsi, Self.resumeNow)
            } else if connection.phase == .responding && !connection.writeStalled {
                // Resumed, and full again before the next write: lws flushed what it held into
                // the socket (holding nothing now) or still holds some. Either way it waits for
                // `POLLOUT` while reading is on, and input after the request would spin the
                // loop (review 62: one byte after the request, 100% of a core for 30 s).
                connection.writeStalled = true
                connection.stalledSince = now
                lws_rx_flow_control(connection.wsi, Self.pauseNow)
            }
        }
    }
}
