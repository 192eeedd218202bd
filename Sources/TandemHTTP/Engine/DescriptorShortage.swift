import Foundation
import CWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// The service thread's state for accepts that fail for want of descriptors (`EMFILE`,
/// `ENFILE`; decisions E34).
///
/// libwebsockets 4.1.6 logs `accept: errno 24` and returns, and the listening socket, still
/// readable, brings it straight back: the server spun at 100% CPU, wrote about 20 MB of log a
/// second and answered nobody (not even `/healthz`) until its silent connections timed out
/// after 30 s, which a client holding connections open could repeat for good (stop 44's
/// review). lws says nothing else about it, so its log line is the signal
/// (`ServiceLoop.acceptFailed`).
struct DescriptorShortage {
    /// A descriptor held in reserve (`/dev/null`): given up for a moment to take one waiting
    /// connection off the listener and close it. -1 until `ServiceLoop.open()`, or when it
    /// could not be opened again.
    var spare: Int32 = -1
    var lastReport: ContinuousClock.Instant?
    /// Since the last report: connections past the limit or failed accepts, connections
    /// waiting for a request closed to make room, new connections refused.
    var failures = 0
    var shed = 0
    var refused = 0
    /// What the last event was, for the next log line ("at its connection limit …").
    var reason = ""
    /// Connections asked to close for a descriptor (made room for, or refused) that lws has
    /// not destroyed yet, with when they were asked. They do not count against the limit: so a
    /// new connection may take the place of one closing. At most `closingAtMost` at once, so
    /// the connections open never pass the limit by more than that (stop 44's third review:
    /// with every new connection kept while closes were pending, a client reconnecting 250
    /// sockets took the server to its last descriptor, lws failed `accept` about 240,000 times
    /// a second and `/healthz` was refused every time). A connection whose next request
    /// arrived before lws closed it is served instead (lws' timeout for the request replaces
    /// the close), and leaves the set then (`requestHeadArrived`); none stays longer than
    /// `closingLimit`, whatever became of it (stop 44's second review: a busy keep-alive
    /// client chosen for closing held a counter above zero for good).
    var closing: [UInt64: ContinuousClock.Instant] = [:]
    /// When request bodies were last looked at for slow ones (`ServiceLoop.cutBodies`).
    var lastBodyCut: ContinuousClock.Instant?

    /// Closes pending at once at most (twice it for a new client that has sent something): so
    /// the connections open pass the limit by at most half of the 64 descriptors kept at least.
    static let closingAtMost = 16
    static let closingLimit = Duration.seconds(1)
    /// One log line at most this often.
    static let reportInterval = Duration.seconds(10)
    /// Connections at most: the descriptor limit (`RLIMIT_NOFILE`) less the descriptors open
    /// when the server starts to listen (the store's files, the loop, logs) and less an eighth
    /// of the limit, at least 64, for what opens later (SQLite's connections for reading
    /// threads, spooled bodies, libdispatch). Set by `ServiceLoop.open()`.
    ///
    /// Stop 44's review: with only the eighth kept, a flood under 256 descriptors left 19 for
    /// all that, and lookups failed 503 "database cannot be reached" (decisions E35).
    var connectionLimit = Int.max

    static func connectionLimit(descriptorLimit: UInt64, open: Int) -> Int {
        guard descriptorLimit < UInt64(Int.max / 2) else { return Int.max }
        let limit = Int(descriptorLimit)
        return max(1, limit - open - max(64, limit / 8))
    }

    /// The descriptors this process has open (`/proc/self/fd`, less the one listing it); nil
    /// when it cannot be listed.
    static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { count += 1 }
        }
        return count - 1
    }

    /// The errno of one of lws' log lines `accept: errno N`, nil for any other line.
    static func acceptErrno(_ line: UnsafePointer<CChar>) -> Int32? {
        let prefix = "accept: errno "
        guard strncmp(line, prefix, prefix.utf8.count) == 0 else { return nil }
        return Int32(String(cString: line + prefix.utf8.count).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

extension ServiceLoop {
    /// A connection was accepted (`LWS_CALLBACK_FILTER_NETWORK_CONNECTION`, service thread);
    /// non-zero refuses it: lws closes it at once and accepts no more on this pass. At
    /// `DescriptorShortage.connectionLimit`, the connection that has waited longest for a
    /// request head is closed to make room for it (`makeRoom`), or, with no such connection or
    /// `closingAtMost` closes pending, the new one is refused. So connections never take the
    /// descriptors the rest of the process needs: SQLite's files, spooled bodies, and
    /// libdispatch, which crashes the process when it cannot get one (stop 44: `trap invalid
    /// opcode in libdispatch.so` in a server flooded under `--nofile=256`, 1 run in about 15;
    /// the store answered 503 "database cannot be reached"). A new client (a health check, a
    /// supervisor) gets in as long as some connection only waits.
    ///
    /// A new connection whose client has already sent something (its request, usually) may
    /// make room past `closingAtMost`, up to twice it: under a flood of silent connections
    /// reconnecting as fast as they are closed, the closes pending were at their bound most of
    /// the time and a health check was refused 4 times in 10 (stop 44's third review: 10 in 10
    /// before connections were refused here).
    func connectionArriving(descriptor: Int32) -> Int32 {
        guard connections.count - shortage.closing.count >= shortage.connectionLimit else { return 0 }
        shortage.failures += 1
        pruneClosing()
        let pendingAtMost = DescriptorShortage.closingAtMost * (Self.hasBytesWaiting(descriptor) ? 2 : 1)
        let admitted = connections.count - shortage.closing.count < shortage.connectionLimit
            || makeRoom(sparing: nil, pendingAtMost: pendingAtMost) || cutBodies()
        if !admitted { shortage.refused += 1 }
        report("at its connection limit (\(shortage.connectionLimit): the descriptor limit less those kept for the rest of the server)")
        return admitted ? 0 : 1
    }

    /// lws could not accept a connection (service thread; `DescriptorShortage`). Out of
    /// descriptors (which the connection limit should leave to others), room is made for the
    /// next (`makeRoom`), and the connection waiting on the listener is taken with the spare
    /// descriptor and closed at once, so lws is not called straight back to fail again. Other
    /// accept errors are only counted and reported.
    func acceptFailed(errno code: Int32) {
        shortage.failures += 1
        if code == EMFILE || code == ENFILE {
            pruneClosing()
            _ = makeRoom(sparing: nil, pendingAtMost: DescriptorShortage.closingAtMost)
            if let listener { refuseOneWaiting(on: listener.descriptor) }
        }
        report(code == EMFILE ? "out of descriptors (EMFILE)" : code == ENFILE ? "the system is out of descriptors (ENFILE)"
               : "accept failed (errno \(code))")
    }

    /// Closes the connection that has waited longest for a request head, unless `pendingAtMost`
    /// closes are pending: one that never made a request (silent, or a head not finished) if
    /// there is one, else an idle keep-alive one; never a WebSocket or a request in progress,
    /// nor `sparing`. Whether it closed one.
    private func makeRoom(sparing: UInt64?, pendingAtMost: Int) -> Bool {
        guard shortage.closing.count < pendingAtMost else { return false }
        // One whose client has sent bytes lws has not read yet (its request is on its way) is
        // passed over, the first 8 such at most (stop 46's review: under a reconnecting flood
        // of slow bodies, a health check's new connection was the oldest waiting, and was
        // closed for the next of the flood before its head was read).
        var peeks = 0
        let waiting = { [self] (entry: HeadDeadlines.Entry) -> Bool in
            guard entry.connection != sparing, let connection = connections[entry.connection],
                  connection.phase == .idle && connection.headPending && !connection.shed else { return false }
            guard peeks < 8 else { return true }
            peeks += 1
            return !Self.hasBytesWaiting(lws_get_socket_fd(connection.wsi))
        }
        // An entry whose connection no longer waits for a head goes too: one that waits again is
        // armed again (stop 44's sixth review: a WebSocket's entry, never retired, held the front
        // for 5 s and no room was made meanwhile).
        let current = { [self] (entry: HeadDeadlines.Entry) -> Bool in
            guard let connection = connections[entry.connection] else { return false }
            return connection.headArming == entry.arming && connection.phase == .idle && connection.headPending
        }
        let oldest = headDeadlines.firstArmed(.first, current: current, choose: waiting)
            ?? headDeadlines.firstArmed(.next, current: current, choose: waiting)
        guard let oldest, let connection = connections[oldest] else { return false }
        closeForRoom(connection)
        shortage.shed += 1
        return true
    }

    /// At the connection limit with no connection only waiting, at most every 100 ms (each look
    /// goes over every connection), up to `closingAtMost` pending closes: connections already
    /// answered that still read a refused body to drop it are closed (stop 44's fifth review:
    /// 170 unauthenticated POSTs refused 421 and trickling a byte a second held every
    /// connection, each for up to 10 s); then request bodies arriving slower than
    /// `bodyMinimumRate` for at least a second are answered 408 and their connections closed
    /// (stop 44's fourth review: 160 unauthenticated POSTs to `/signin` sending a byte every 3 s
    /// held every connection until their 10 s deadline, reopened then, and `/healthz` was
    /// refused 40 times in 40; a request in progress is otherwise never closed to make room);
    /// then responses whose socket has taken nothing for a second, or that the client reads
    /// slower than the same rate, are closed (stop 46's review: 170 clients that asked for
    /// `/openapi.json` and never read held every connection for lws' 30 s, and reopened them).
    /// Whether any connection was closed.
    private func cutBodies() -> Bool {
        let now = ContinuousClock.now
        guard shortage.closing.count < DescriptorShortage.closingAtMost,
              shortage.lastBodyCut.map({ now - $0 >= .milliseconds(100) }) ?? true else { return false }
        shortage.lastBodyCut = now
        let rate = max(1, configuration.bodyMinimumRate)
        var cut = 0
        for connection in connections.values where connection.phase == .discardingBody && !connection.shed {
            closeForRoom(connection)
            shortage.shed += 1
            cut += 1
            if shortage.closing.count >= DescriptorShortage.closingAtMost { return true }
        }
        for connection in connections.values where connection.phase == .receivingBody && !connection.shed {
            guard let began = connection.bodyBegan, now - began >= .seconds(1) else { continue }
            let elapsed = now - began
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            guard Double(connection.bodyReceived) < seconds * Double(rate) else { continue }
            connection.bodyOutstanding = 0
            reject(connection, status: 408, reason: "The server is at its connection limit, and the request body was arriving slower than "
                   + "\(rate >> 10) KiB/s (\(connection.bodyReceived) of \(connection.bodyLength) bytes in \(Int(seconds)) s); send it again.")
            connection.shed = true
            shortage.closing[connection.id] = now
            shortage.shed += 1
            cut += 1
            if shortage.closing.count >= DescriptorShortage.closingAtMost { return true }
        }
        // Responses whose socket has taken nothing for a second, or read slower than the same
        // rate (decisions E39): no answer can be written into a response begun, so the
        // connection is closed. (What was handed to lws includes what it and the kernel still
        // hold, so the rate alone let a client that read nothing keep its connection 2 s.)
        for connection in connections.values where connection.phase == .responding && !connection.shed {
            guard let outgoing = connection.outgoing, now - outgoing.began >= .seconds(1) else { continue }
            let elapsed = now - outgoing.began
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let stalled = connection.writeStalled && connection.stalledSince.map { now - $0 >= .seconds(1) } == true
            guard stalled || Double(outgoing.handed) < seconds * Double(rate) else { continue }
            // lws would wait up to 5 s to flush what it holds before closing; a client that does
            // not read would keep the descriptor that long. Shut down, its write fails at once.
            if connection.writeStalled {
                connection.writeStalled = false
                lws_rx_flow_control(connection.wsi, Self.resumeNow)
            }
            shutdown(lws_get_socket_fd(connection.wsi), Int32(SHUT_RDWR))
            closeForRoom(connection)
            shortage.shed += 1
            cut += 1
            if shortage.closing.count >= DescriptorShortage.closingAtMost { break }
        }
        return cut > 0
    }

    /// Whether the client of a connection not yet handed to lws has sent anything.
    private static func hasBytesWaiting(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 1
    }

    /// Asks lws to close `connection` on its next pass, and counts it closing.
    private func closeForRoom(_ connection: Connection) {
        connection.shed = true
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        shortage.closing[connection.id] = .now
    }

    /// Forgets closes older than `closingLimit` (their connection is served or stuck; it counts
    /// again) and those of connections served after all.
    private func pruneClosing() {
        guard !shortage.closing.isEmpty else { return }
        let now = ContinuousClock.now
        shortage.closing = shortage.closing.filter { id, asked in
            now - asked < DescriptorShortage.closingLimit && connections[id]?.shed == true
        }
    }

    /// One log line every 10 s at most, saying what was done since the last.
    private func report(_ what: String) {
        shortage.reason = what
        reportShortageIfDue()
    }

    /// Writes what was done since the last line once 10 s have passed since it (service thread;
    /// also after each turn of the loop, so the rest of a flood is reported when it ends, not
    /// only its first moment: stop 44's review saw one line for a flood of 30 s).
    func reportShortageIfDue() {
        guard shortage.failures > 0 else { return }
        let now = ContinuousClock.now
        guard shortage.lastReport.map({ now - $0 >= DescriptorShortage.reportInterval }) ?? true else { return }
        ErrorReport.line("port \(counters.port): \(shortage.reason): \(shortage.failures) times"
                         + (shortage.lastReport == nil ? "" : " since the last line of this kind")
                         + ", \(shortage.shed) connections closed to make room (waiting for a request, or a body arriving too slowly), "
                         + "\(shortage.refused) new connections refused; \(connections.count) connections open now")
        shortage.lastReport = now
        (shortage.failures, shortage.shed, shortage.refused) = (0, 0, 0)
    }

    /// Takes one connection waiting on the listening socket and closes it, using the spare
    /// descriptor for the moment it takes.
    private func refuseOneWaiting(on descriptor: Int32) {
        guard shortage.spare >= 0 else {
            shortage.spare = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            return
        }
        close(shortage.spare)
        let taken = accept(descriptor, nil, nil)   // closed at once: no exec can inherit it
        if taken >= 0 {
            close(taken)
            shortage.refused += 1
        }
        shortage.spare = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
