import Foundation
import TandemCore

/// The console's charts: server-drawn SVG line charts (no chart library; decisions C7). The page
/// is rendered with the current lines; `/console/console.js` then replaces each polyline's
/// `points` and the labels with what `/console/metrics.json` answers, which this same type
/// computes, so there is one drawing of a chart.
struct ConsoleChart {
    /// One line of a chart.
    struct Series {
        var name: String
        var label: String
        var values: [Double]
    }

    var id: String
    var title: String
    /// Shown after numbers, e.g. `req/s`, `ms`.
    var unit: String
    var series: [Series]
    /// Values are counts (open connections): shown without decimals.
    var integers = false

    static let width = 300.0
    static let height = 120.0
    static let top = 14.0
    static let bottom = 112.0

    /// The y-axis top: the largest value rounded up to 1, 2 or 5 × a power of ten (at least 1).
    var scale: Double {
        let largest = series.flatMap(\.values).max() ?? 0
        guard largest > 1 else { return 1 }
        let power = pow(10, floor(log10(largest)))
        for step in [1.0, 2, 5, 10] where step * power >= largest { return step * power }
        return 10 * power
    }

    /// A polyline's `points` for `values`, the newest at the right edge.
    func points(_ values: [Double]) -> String {
        // At least 30 slots, so a short history is a line, not a dot at the edge.
        let step = Self.width / Double(max(values.count - 1, 29))
        let scale = self.scale
        return values.enumerated().map { index, value in
            let x = Self.width - Double(values.count - 1 - index) * step
            let y = Self.bottom - (Self.bottom - Self.top) * min(value, scale) / scale
            return String(format: "%.1f,%.1f", x, y)
        }.joined(separator: " ")
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }

    func label(_ value: Double) -> String {
        (integers ? String(format: "%.0f", value) : Self.format(value)) + (unit.isEmpty ? "" : " " + unit)
    }

    var maxLabel: String { label(scale) }

    /// The latest value of each series, for the caption.
    var summary: String {
        series.map { "\($0.label) \(label($0.values.last ?? 0))" }.joined(separator: " · ")
    }

    func svg() -> String {
        let lines = series.enumerated().map { index, line in
            "<polyline class=\"line line-\(index)\" id=\"\(id)-\(line.name)\" points=\"\(points(line.values))\"/>"
        }.joined()
        let legend = series.enumerated().map { index, line in
            "<span class=\"key key-\(index)\">\(ConsoleHTML.escape(line.label))</span>"
        }.joined(separator: " ")
        return """
            <figure class="chart" id="\(id)">
            <figcaption><strong id="\(id)-title">\(ConsoleHTML.escape(title))</strong> <span class="legend">\(legend)</span></figcaption>
            <svg viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" aria-labelledby="\(id)-title \(id)-summary" preserveAspectRatio="none">
            <line class="axis" x1="0" y1="\(Self.bottom)" x2="\(Self.width)" y2="\(Self.bottom)"/><line class="grid" x1="0" y1="\(Self.top)" x2="\(Self.width)" y2="\(Self.top)"/>
            <text class="max" x="2" y="11" id="\(id)-max">\(ConsoleHTML.escape(maxLabel))</text>\(lines)</svg>
            <p class="summary" id="\(id)-summary">Now: \(ConsoleHTML.escape(summary))</p>
            </figure>
            """
    }

    /// `{"max", "summary", "points": {name: points}}` for the script.
    var json: JSONValue {
        var points = JSONObject()
        for line in series { points[line.name] = .string(self.points(line.values)) }
        return ["max": .string(maxLabel), "summary": .string("Now: " + summary), "points": .object(points)]
    }
}
