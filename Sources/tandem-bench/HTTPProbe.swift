import Foundation

/// Single requests made with curl: a health check, setup writes, and one sample of each
/// benchmark's request before the load, so a request that fails is seen before it is counted.
enum HTTPProbe {
    struct Response {
        var status: Int
        var body: String

        /// How many times `text` appears in the body, e.g. one `recordChangeTag` per record.
        func occurrences(of text: String) -> Int {
            body.components(separatedBy: text).count - 1
        }
    }

    /// POSTs `body` and checks the answer: status 200, `expect` in the body, and no
    /// `serverErrorCode` (per-item errors come back with status 200).
    /// - Throws: `BenchError` with the response when the check fails.
    @discardableResult
    static func post(_ url: String, headers: [(String, String)], body: String, expect: String) throws -> Response {
        var arguments = ["-sS", "-m", "30", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "--data-binary", body]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        return try check(request(arguments + [url]), url: url, expect: expect)
    }

    /// POSTs `body` and returns the answer unchecked (for requests expected to fail).
    static func postUnchecked(_ url: String, headers: [(String, String)], body: String) throws -> Response {
        var arguments = ["-sS", "-m", "30", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "--data-binary", body]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        return try request(arguments + [url])
    }

    @discardableResult
    static func get(_ url: String, headers: [(String, String)] = [], expect: String) throws -> Response {
        var arguments = ["-sS", "-m", "30", "-o", "-", "-w", "\n%{http_code}"]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        return try check(request(arguments + [url]), url: url, expect: expect)
    }

    private static func request(_ arguments: [String]) throws -> Response {
        guard let curl = Shell.which("curl") else { throw BenchError("curl is not installed (scripts/bootstrap installs it)") }
        let output = try Shell.run(curl, arguments)
        guard output.status == 0 else { throw BenchError("curl failed (\(output.status)): \(output.stderr)") }
        var lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.popLast() ?? "") ?? 0
        return Response(status: status, body: lines.joined(separator: "\n"))
    }

    private static func check(_ response: Response, url: String, expect: String) throws -> Response {
        guard response.status == 200, response.body.contains(expect), !response.body.contains("serverErrorCode") else {
            throw BenchError("\(url) answered \(response.status): \(response.body.prefix(600))")
        }
        return response
    }
}
