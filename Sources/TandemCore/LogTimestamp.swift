import Foundation

/// The time that starts every line the server logs: UTC to the millisecond,
/// `2026-11-29T12:00:00.123Z` (the request log's, and the HTTP layer's reports).
package enum LogTimestamp {
    package static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var time = tm()
        var seconds = spec.tv_sec
        gmtime_r(&seconds, &time)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", time.tm_year + 1900, time.tm_mon + 1, time.tm_mday,
                      time.tm_hour, time.tm_min, time.tm_sec, spec.tv_nsec / 1_000_000)
    }
}
