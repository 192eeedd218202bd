import Foundation
import TandemTestSupport

/// Request bodies larger than 64 KiB go through the `curl` command, not `URLSession`.
///
/// On Linux, `URLSession` drives libcurl through libdispatch sources, one per socket; a body
/// larger than curl's 64 KiB buffer makes it add and remove those sources as it writes, and
/// when a new connection's socket reuses a closed one's descriptor libdispatch can keep the
/// old registration (swift-corelibs-libdispatch issue 833). The upload then never sends its
/// body: the server waited its body deadline and answered 408 with "0 bytes arrived"
/// (DiskFullTests, seen under load in CI). The server was right; the client stalled.
/// `curl` is the same library without libdispatch in between.
extension TestServer {
    /// Bodies up to this size go through `URLSession` (one buffer fill of curl's).
    static let largestURLSessionBody = 60_000

    func sendThroughCurl(_ method: String, _ url: String, body: Data, token: String??, headers: [String: String]) throws -> Response {
        let directory = try ExitCleanup.temporaryDirectory("tandem-curl")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bodyFile = directory + "/body", answerFile = directory + "/answer", headFile = directory + "/head"
        try body.write(to: URL(fileURLWithPath: bodyFile))
        var arguments = ["-sS", "--max-time", "60", "-X", method, "--data-binary", "@" + bodyFile,
                         "-o", answerFile, "-D", headFile, "-H", "Expect:"]
        let bearer: String? = switch token { case .none: self.token; case .some(let t): t }
        if let bearer { arguments += ["-H", "Authorization: Bearer \(bearer)"] }
        var all = headers
        if all["Content-Type"] == nil { all["Content-Type"] = "application/json" }
        for (name, value) in all { arguments += ["-H", "\(name): \(value)"] }
        arguments.append(url)
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = arguments
        let errors = Pipe()
        curl.standardError = errors
        try curl.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let curlEnd = curl.waitForTermination()
        guard curlEnd.status == 0 else { throw TestFailure("curl \(method) \(url): \(message)") }
        // The last head is the answer's (a 100 Continue may come first).
        let heads = try String(contentsOfFile: headFile, encoding: .utf8).components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        guard let head = heads.last?.components(separatedBy: "\r\n"), let statusLine = head.first,
              let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw TestFailure("curl \(method) \(url): no status line in \(heads)")
        }
        var headerMap: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headerMap[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let answer = (try? Data(contentsOf: URL(fileURLWithPath: answerFile))) ?? Data()
        return Response(status: status, body: answer, headers: headerMap)
    }
}
