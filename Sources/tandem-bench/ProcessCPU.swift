import Foundation

/// CPU time used by a process or thread. On a machine shared with other work, wall-clock rates
/// move with the load while CPU time per request mostly does not, so the bench prints both.
enum ProcessCPU {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// User plus system CPU seconds of process `pid` (all its threads), from /proc/<pid>/stat.
    static func seconds(pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        // After "pid (comm)": state is field 3, utime field 14, stime field 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticksPerSecond
    }

    /// CPU seconds of this process (the in-process hello server's threads included).
    static var ownProcess: Double { seconds(pid: getpid()) }

    /// CPU seconds of the calling thread, to the nanosecond.
    static var currentThread: Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
