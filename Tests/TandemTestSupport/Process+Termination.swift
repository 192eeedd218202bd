public import Foundation

extension Process {
    /// Waits for the process to end and returns what `terminationStatus` would (its exit code,
    /// or the number of the signal that ended it) and whether a signal ended it.
    ///
    /// `waitUntilExit()` waits for Foundation to reap the child, and Foundation now and then never
    /// does: a test run hung for good in a `TestServer`'s deinit with the server a zombie
    /// (`Z` in /proc) and Foundation's reaper thread idle (stop 43, seen under load; issue 21's
    /// "a test process once hung"). This polls instead, and a child that has been a zombie for a
    /// second while Foundation still calls it running is taken as ended, its status read from
    /// /proc/PID/stat (field 52, `exit_code`). It never reaps the child itself (`waitpid` here
    /// would race Foundation's reaper); such a zombie, and its Process, stay until the test
    /// process ends.
    @discardableResult
    public func waitForTermination() -> (status: Int32, signalled: Bool) {
        let pid = processIdentifier
        var zombieSince: Date?
        while isRunning {
            if let code = Self.zombieExitCode(pid) {
                if let since = zombieSince {
                    if Date().timeIntervalSince(since) >= 1 { return code & 0x7f != 0 ? (code & 0x7f, true) : ((code >> 8) & 0xff, false) }
                } else {
                    zombieSince = Date()
                }
            }
            usleep(5_000)
        }
        // Ended: returns at once, and drops the run loop source that keeps this Process, and so
        // its pipes' descriptors, alive (without it a run leaked thousands of descriptors and
        // Foundation's next spawn crashed).
        waitUntilExit()
        return (terminationStatus, terminationReason == .uncaughtSignal)
    }

    /// The wait status of `pid` when it is a zombie, nil otherwise.
    private static func zombieExitCode(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": field 3 is the state; fields are counted from 1, so field 52 is the 50th after comm.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.first == "Z", fields.count >= 50, let code = Int32(fields[49]) else { return nil }
        return code
    }
}
