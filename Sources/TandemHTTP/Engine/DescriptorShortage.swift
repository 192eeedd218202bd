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
    /// Connections closed to free descriptors that lws has not destroyed yet: until they are
    /// gone, nothing waiting is refused (it would be the very client the closes make room for).
    var closing = 0
    var shed = 0
    var refused = 0

    /// The least time between two rounds of closing connections, so the closes of one round
    /// (done by lws on its next pass) free descriptors before the next is chosen.
    static let shedInterval = Duration.milliseconds(100)
    /// One log line at most this often.
    static let reportInterval = Duration.seconds(10)
    /// Connections closed in one round: a twentieth of those open, at least this many.
    static let shedAtLeast = 16

    /// The errno of one of lws' log lines `accept: errno N`, nil for any other line.
    static func acceptErrno(_ line: UnsafePointer<CChar>) -> Int32? {
        let prefix = "accept: errno "
        guard strncmp(line, prefix, prefix.utf8.count) == 0 else { return nil }
        return Int32(String(cString: line + prefix.utf8.count).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

extension ServiceLoop {
    /// lws could not accept a connection (service thread; `DescriptorShortage`). Out of
    /// descriptors, the oldest connections waiting for a request head (silent ones, and idle
    /// keep-alive ones; never WebSockets or requests in progress) are closed: a twentieth of
    /// the connections, at least 16, at most every 100 ms, so that a new client (a health
    /// check, a supervisor) gets in; until lws has closed them, lws is left to try again. When
    /// there is none to close, or the last round was under 100 ms ago, the connection waiting
    /// on the listener is taken with the spare descriptor and closed at once, so lws is not
    /// called straight back to fail again. One log line
    /// every 10 s at most says what was done. Other accept errors are only counted and
    /// reported.
    func acceptFailed(errno code: Int32) {
        let now = ContinuousClock.now
        shortage.failures += 1
        if code == EMFILE || code == ENFILE, shortage.closing == 0 {
            var closed = 0
            if shortage.lastShed.map({ now - $0 >= DescriptorShortage.shedInterval }) ?? true {
                let count = max(DescriptorShortage.shedAtLeast, connections.count / 20)
                let waiting = connections.values.filter { $0.phase == .idle && $0.headPending }.sorted { $0.id < $1.id }.prefix(count)
                for connection in waiting {
                    connection.shed = true
                    lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                }
                shortage.closing += waiting.count
                closed = waiting.count
                shortage.shed += closed
                shortage.lastShed = now
            }
            if closed == 0, let listener { refuseOneWaiting(on: listener.descriptor) }
        }
        guard shortage.lastReport.map({ now - $0 >= DescriptorShortage.reportInterval }) ?? true else { return }
        let what = code == EMFILE ? "out of descriptors (EMFILE)" : code == ENFILE ? "the system is out of descriptors (ENFILE)"
            : "accept failed (errno \(code))"
        ErrorReport.line("port \(counters.port): \(what) with \(connections.count) connections open: \(shortage.failures) accepts "
                         + "failed, \(shortage.shed) connections waiting for a request closed, \(shortage.refused) new connections "
                         + "refused" + (shortage.lastReport == nil ? "" : " in the last \(Int(DescriptorShortage.reportInterval.components.seconds)) s or more"))
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
