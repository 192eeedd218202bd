import Glibc

/// Wall-clock time in milliseconds since 1970-01-01 UTC, CloudKit's timestamp unit.
public enum Clock {
    public static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
