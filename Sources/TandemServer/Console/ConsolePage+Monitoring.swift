import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The live request log and the charts (decisions C6, C7). Pages are rendered complete; the
/// console script polls the `.json` twins every 2 seconds to add new log rows and redraw charts.
extension ConsolePage {
    func monitoring(_ visit: Visit, segments: [String]) throws -> HTTPResponse {
        guard visit.context.request.head.method == "GET" else { throw MethodNotAllowed(allowed: "GET") }
        guard segments.count == 1 else { throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)") }
        switch segments[0] {
        case "logs": return logPage(visit)
        case "logs.json": return try logJSON(visit)
        case "metrics": return metricsPage(visit)
        default: return json(["charts": .object(charts().reduce(into: JSONObject()) { $0[$1.id] = $1.json })])
        }
    }

    // MARK: Request log

    private func filter(_ visit: Visit) -> RecentRequests.Filter {
        RecentRequests.Filter(status: (visit.fields["status"] ?? "").trimmingCharacters(in: .whitespaces).lowercased(),
                              pathPrefix: (visit.fields["path"] ?? "").trimmingCharacters(in: .whitespaces),
                              requestID: (visit.fields["id"] ?? "").trimmingCharacters(in: .whitespaces).lowercased())
    }

    static let statusHint = "A class such as 4xx or a code such as 404; empty for all."

    private func logPage(_ visit: Visit) -> HTTPResponse {
        let filter = filter(visit)
        let valid = filter.isValid
        let entries = valid ? log.recent.entries(matching: filter) : []
        let rows = entries.map(Self.logRow).joined(separator: "\n")
        let body = """
            <form method="get" action="/console/logs" id="log-filter" class="filters">
            \(ConsoleHTML.field("Status", name: "status", value: filter.status, autocomplete: "off", placeholder: "5xx",
                                error: valid ? nil : "Give a class such as 4xx or a three-digit code.", hint: Self.statusHint))
            \(ConsoleHTML.field("Path starts with", name: "path", value: filter.pathPrefix, autocomplete: "off", placeholder: "/database/1/"))
            \(ConsoleHTML.field("Request ID", name: "id", value: filter.requestID, autocomplete: "off", placeholder: "uuid from an error body"))
            <button type="submit" id="log-filter-submit">Filter</button></form>
            <p class="hint" id="log-status">The last \(log.recent.capacity) requests this server answered, newest first; new ones appear as they come.</p>
            <div class="scroll" tabindex="0" role="region" aria-label="Requests"><table id="log"><caption>Requests</caption><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Method</th><th scope="col">Path</th>
            <th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Request ID</th></tr></thead>
            <tbody id="log-rows" data-after="\(entries.first?.sequence ?? 0)" data-status="\(ConsoleHTML.escape(filter.status))" data-path="\(ConsoleHTML.escape(filter.pathPrefix))" data-id="\(ConsoleHTML.escape(filter.requestID))">
            \(rows)
            </tbody></table></div>
            """
        return page(ConsoleHTML.page(title: "Request log", csrf: visit.csrf, current: "logs", body: body), status: valid ? 200 : 400)
    }

    static func logRow(_ entry: RecentRequests.Entry) -> String {
        let cells = [ConsoleHTML.clock(entry.time), entry.method, entry.path, String(entry.status), latency(entry.microseconds), entry.uuid]
        return "<tr class=\"status-\(entry.status / 100)xx\">" + cells.map { "<td>\(ConsoleHTML.escape($0))</td>" }.joined() + "</tr>"
    }

    static func latency(_ microseconds: Int) -> String {
        microseconds >= 1000 ? ConsoleChart.format(Double(microseconds) / 1000) + " ms" : "\(microseconds) µs"
    }

    /// `{"entries": [{sequence, time, method, path, status, latency, uuid}], "after"}`, newest first.
    private func logJSON(_ visit: Visit) throws -> HTTPResponse {
        let filter = filter(visit)
        guard filter.isValid else { throw CloudKitError.badRequest("status must be a class such as 4xx or a three-digit code") }
        let after = Int(visit.fields["after"] ?? "") ?? 0
        let entries = log.recent.entries(after: after, matching: filter)
        let list: [JSONValue] = entries.map { entry in
            ["sequence": .int(Int64(entry.sequence)), "time": .string(ConsoleHTML.clock(entry.time)), "method": .string(entry.method),
             "path": .string(entry.path), "status": .int(Int64(entry.status)), "latency": .string(Self.latency(entry.microseconds)),
             "uuid": .string(entry.uuid)]
        }
        return json(["entries": .array(list), "after": .int(Int64(entries.first?.sequence ?? after))])
    }

    // MARK: Charts

    func charts() -> [ConsoleChart] {
        let points = monitor.points()
        return [
            ConsoleChart(id: "chart-requests", title: "Requests per second", unit: "req/s",
                         series: [.init(name: "rate", label: "requests", values: points.map(\.requestsPerSecond))]),
            ConsoleChart(id: "chart-latency", title: "Latency", unit: "ms",
                         series: [.init(name: "p50", label: "p50", values: points.map(\.p50)), .init(name: "p99", label: "p99", values: points.map(\.p99))]),
            ConsoleChart(id: "chart-errors", title: "Errors per second", unit: "/s",
                         series: [.init(name: "server", label: "5xx", values: points.map(\.errorsPerSecond)),
                                  .init(name: "client", label: "4xx", values: points.map(\.clientErrorsPerSecond))]),
            ConsoleChart(id: "chart-connections", title: "Open connections", unit: "",
                         series: [.init(name: "open", label: "open", values: points.map { Double($0.openConnections) })], integers: true),
        ]
    }

    private func metricsPage(_ visit: Visit) -> HTTPResponse {
        let body = """
            <p class="hint" id="metrics-text">From the counters behind <a href="/metrics">/metrics</a>, sampled every 2 seconds while this page is open (the last 6 minutes).</p>
            <div class="charts" id="charts">
            \(charts().map { $0.svg() }.joined(separator: "\n"))
            </div>
            """
        return page(ConsoleHTML.page(title: "Metrics", csrf: visit.csrf, current: "metrics", body: body), status: 200)
    }
}
