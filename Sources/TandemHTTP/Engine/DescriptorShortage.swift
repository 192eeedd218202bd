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
    var lastShed: ContinuousClock.Instant?
    var lastReport: ContinuousClock.Instant?
    /// Since the last report: failed accepts, connections closed, waiting connections refused.
    var failures = 0
    /// Connections closed to free descriptors that lws has not destroyed yet (by ID): until
    /// they are gone, nothing waiting is refused (it would be the very client the closes make
    /// room for). A connection whose next request arrived before lws closed it is not closed
    /// (lws' own timeout for the request replaces the close), so it leaves the set then
    /// (`requestHeadArrived`); and none counts longer than `closingLimit` after its round,
    /// whatever became of it (stop 44's second review: one busy keep-alive client chosen for
    /// closing kept a counter above zero for good, and the server spun on `accept` again).
    var closing: Set<UInt64> = []
    var shed = 0
    var refused = 0
    /// What the last event was, for the next log line ("at its connection limit …").
    var reason = ""

    /// The least time between two rounds of closing connections, so the closes of one round
    /// (done by lws on its next pass) free descriptors before the next is chosen.
    static let shedInterval = Duration.milliseconds(100)
    /// How long a round's closes may take before they no longer hold refusals back.
    static let closingLimit = Duration.seconds(1)
    /// One log line at most this often.
    static let reportInterval = Duration.seconds(10)
    /// Connections closed in one round: a twentieth of those open, at least this many.
    static let shedAtLeast = 16
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
    /// A connection was accepted past `DescriptorShortage.connectionLimit` (service thread):
    /// room is made as for a failed accept (`makeRoom`), or, when none can be made now, the
    /// new connection is closed. So connections never take the descriptors the rest of the
    /// process needs: SQLite's files, spooled bodies, and libdispatch, which crashes the
    /// process when it cannot get one (stop 44: `trap invalid opcode in libdispatch.so` in a
    /// server flooded under `--nofile=256`, 1 run in about 15; the store answered 503
    /// "database cannot be reached" meanwhile).
    func connectionOverLimit(_ connection: Connection) {
        shortage.failures += 1
        if !makeRoom(sparing: connection.id) {
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            shortage.refused += 1
        }
        report("at its connection limit (\(shortage.connectionLimit): the descriptor limit less those kept for the rest of the server)")
    }

    /// lws could not accept a connection (service thread; `DescriptorShortage`). Out of
    /// descriptors (which the connection limit above should leave to others), room is made
    /// (`makeRoom`); when none can be made now, the connection waiting on the listener is
    /// taken with the spare descriptor and closed at once, so lws is not called straight back
    /// to fail again. Other accept errors are only counted and reported.
    func acceptFailed(errno code: Int32) {
        shortage.failures += 1
        if code == EMFILE || code == ENFILE, !makeRoom(sparing: nil), let listener { refuseOneWaiting(on: listener.descriptor) }
        report(code == EMFILE ? "out of descriptors (EMFILE)" : code == ENFILE ? "the system is out of descriptors (ENFILE)"
               : "accept failed (errno \(code))")
    }

    /// Closes the oldest connections waiting for a request head (silent ones, and idle
    /// keep-alive ones; never WebSockets or requests in progress, nor `sparing`): a twentieth
    /// of the connections, at least 16, at most every 100 ms, so that a new client (a health
    /// check, a supervisor) gets in. Whether room is being made: a round's closes still
    /// pending, or a round started now that found any.
    private func makeRoom(sparing: UInt64?) -> Bool {
        let now = ContinuousClock.now
        if let last = shortage.lastShed, now - last >= DescriptorShortage.closingLimit {
            shortage.closing.removeAll()
        } else {
            shortage.closing = shortage.closing.filter { connections[$0]?.shed == true }
        }
        guard shortage.closing.isEmpty else { return true }
        guard shortage.lastShed.map({ now - $0 >= DescriptorShortage.shedInterval }) ?? true else { return false }
        let count = max(DescriptorShortage.shedAtLeast, connections.count / 20)
        let waiting = connections.values.filter { $0.phase == .idle && $0.headPending && $0.id != sparing }
            .sorted { $0.id < $1.id }.prefix(count)
        for connection in waiting {
            connection.shed = true
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
        shortage.closing.formUnion(waiting.map(\.id))
        shortage.shed += waiting.count
        shortage.lastShed = now
        return !waiting.isEmpty
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
        ErrorReport.line("port \(counters.port): \(shortage.reason) with \(connections.count) connections open: \(shortage.failures) times, "
                         + "\(shortage.shed) connections waiting for a request closed, \(shortage.refused) new connections refused"
                         + (shortage.lastReport == nil ? "" : " since the last line of this kind"))
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
