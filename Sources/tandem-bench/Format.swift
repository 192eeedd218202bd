import Foundation

/// How figures are written in the report.
enum Format {
    /// `12,345`
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }

    /// `12,345/s`
    static func rate(_ perSecond: Double) -> String { count(Int(perSecond.rounded())) + "/s" }

    /// `1.23 ms` (or `812 µs` below a millisecond).
    static func latency(_ seconds: Double) -> String {
        seconds < 1e-3 ? String(format: "%.0f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1e3)
    }

    /// `12.3 s`
    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
    static func milliseconds(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }

    /// `45%`
    static func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }

    /// `123.4 MiB`
    static func bytes(_ value: Int) -> String { String(format: "%.1f MiB", Double(value) / 1_048_576) }
}
