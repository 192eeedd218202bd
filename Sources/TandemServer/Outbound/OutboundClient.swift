import TandemHTTP
import Foundation

/// Every HTTP request the server makes to another host (webhook deliveries, association
/// files): the URL passes `OutboundRule` first, and the connection goes to the address that
/// was checked, never to a second resolution of the name.
///
/// Runs the `curl` command (a bootstrap package) rather than linking libcurl: fetches are
/// rare, and a child process keeps TLS, proxies and timeouts out of the server's address
/// space. The pinning is curl's `--connect-to ::ADDRESS:PORT` (any host, any port goes to
/// that numeric address, so curl resolves nothing), with `-q` (no `.curlrc`), `--noproxy '*'`
/// (a proxy would make the connection elsewhere), `--proto` limited to what the rule allowed,
/// and no `--location`: redirects are never followed, a 3xx is returned as it is.
struct OutboundClient: Sendable {
    var rule: OutboundRule
    /// Seconds before a request is abandoned.
    var timeout = 10

    struct Request: Sendable {
        var method = "GET"
        var url: String
        var headers: [(name: String, value: String)] = []
        var body: [UInt8]?
        /// Response bytes beyond which the fetch is abandoned (`OutboundError.failed`).
        var maximumResponseBytes = 1 << 20
    }

    struct Response: Sendable {
        var status: Int
        /// The `content-type` header, lower-cased; `""` when absent.
        var contentType: String
        var body: [UInt8]
    }

    /// Checks `request.url`, then performs the request.
    /// - Throws: `OutboundError.refused` (the rule) or `.failed` (curl's reason, or a body
    ///   over `maximumResponseBytes`).
    func perform(_ request: Request) throws(OutboundError) -> Response {
        let target = try OutboundTarget.resolve(request.url, rule: rule)
        // Every address passed; the first is the one connected to.
        let address = target.addresses[0]
        let marker = "tandem-fetch:"
        // --globoff: curl would otherwise expand `[1-5]` and `{a,b}` in the URL into several
        // requests, so one notification could become many.
        var arguments = ["curl", "-q", "--globoff", "--silent", "--show-error", "--max-time", String(timeout), "--noproxy", "*",
                         "--proto", target.scheme == "https" ? "=https" : "=http,https",
                         "--connect-to", "::\(address.hostForm):\(target.port)",
                         "--request", request.method, "--user-agent", "tandem"]
        for (name, value) in request.headers where !value.contains(where: \.isNewline) {
            arguments += ["--header", "\(name): \(value)"]
        }
        if request.body != nil { arguments += ["--data-binary", "@-"] }
        arguments += ["--output", "-", "--write-out", "%{stderr}\n\(marker)%{http_code} %{content_type}\n", target.url]

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let input = Pipe(), out = Pipe(), err = Pipe()
        process.standardInput = request.body == nil ? FileHandle.nullDevice : input
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { throw .failed("cannot run curl: \(error)") }
        if let body = request.body {
            // Written beside the reading below, so a body larger than a pipe cannot deadlock.
            let writer = input.fileHandleForWriting
            DispatchQueue.global().async {
                try? writer.write(contentsOf: Data(body))
                try? writer.close()
            }
        }
        var received: [UInt8] = []
        var tooLarge = false
        while true {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received += chunk
            if received.count > request.maximumResponseBytes {
                tooLarge = true
                process.terminate()
                break
            }
        }
        let report = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if tooLarge { throw .failed("\(target.url) answered more than \(request.maximumResponseBytes) bytes; abandoned") }
        guard let line = report.split(separator: "\n").last(where: { $0.hasPrefix(marker) }) else {
            throw .failed("\(target.url) could not be fetched: \(report.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let fields = line.dropFirst(marker.count).split(separator: " ", maxSplits: 1)
        let status = Int(fields.first ?? "") ?? 0
        if process.terminationStatus != 0 && status == 0 {
            throw .failed("\(target.url) could not be fetched: \(report.split(separator: "\n").first ?? "curl failed")")
        }
        return Response(status: status, contentType: fields.count > 1 ? String(fields[1]).lowercased() : "", body: received)
    }
}
