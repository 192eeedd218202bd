import Foundation
import Synchronization
import TandemHTTP

/// A responder for end-to-end tests, routed by path:
/// - `/sleep?ms=N&id=X`: sleeps N ms, answers `slept X` (tracks how many run at once).
/// - any path with `brief=1` in its query runs briefly (`HTTPResponder.runsBriefly`).
/// - `/big?bytes=N`: answers N bytes of `TestResponder.pattern`.
/// - `/status?code=N`: answers status N with body `status N`.
/// - `/file?bytes=N&from=A&claim=C`: answers C bytes (default to the end) from offset A of a
///   file holding N bytes of `pattern`, as an `HTTPFileBody`.
/// - anything else: echoes the body, and method, path, query, remote address and every
///   request header as `x-method`, `x-path`, `x-query`, `x-remote`, `x-echo-<name>` headers.
final class TestResponder: HTTPResponder {
    let limit: Int
    private let active = Atomic<Int>(0)
    private let peakActive = Atomic<Int>(0)
    private let served = Atomic<Int>(0)

    init(bodyLimit: Int = 8 << 20) {
        limit = bodyLimit
    }

    /// The most `/sleep` requests that were running at the same moment.
    var peakConcurrency: Int { peakActive.load(ordering: .relaxed) }
    var requestsServed: Int { served.load(ordering: .relaxed) }
    /// `/sleep` requests running right now.
    var activeCount: Int { active.load(ordering: .relaxed) }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        served.add(1, ordering: .relaxed)
        let query = Self.parameters(request.query)
        switch request.path {
        case "/sleep":
            let now = active.add(1, ordering: .relaxed).newValue
            var peak = peakActive.load(ordering: .relaxed)
            while now > peak {
                let (exchanged, original) = peakActive.compareExchange(expected: peak, desired: now, ordering: .relaxed)
                if exchanged { break }
                peak = original
            }
            usleep(UInt32(Int(query["ms"] ?? "0")! * 1000))
            active.subtract(1, ordering: .relaxed)
            return HTTPResponse(status: 200, headers: [("content-type", "text/plain")],
                                body: Array("slept \(query["id"] ?? "")".utf8))
        case "/big":
            let count = Int(query["bytes"] ?? "0")!
            return HTTPResponse(status: 200, headers: [("content-type", "application/octet-stream")],
                                body: Self.pattern(count: count))
        case "/file":
            // `bytes` of `pattern` in a temporary file (the test run's folder goes with it), sent
            // from `from` for `claim` bytes (default all of it).
            let count = Int(query["bytes"] ?? "0")!
            let from = Int(query["from"] ?? "0")!
            let claim = Int(query["claim"] ?? "\(count - from)")!
            let path = NSTemporaryDirectory() + "tandem-file-body-" + UUID().uuidString
            FileManager.default.createFile(atPath: path, contents: Data(Self.pattern(count: count)))
            return HTTPResponse(status: 200, headers: [("content-type", "application/octet-stream")],
                                file: HTTPFileBody(path: path, range: from..<(from + claim)))
        case "/status":
            let code = Int(query["code"] ?? "200")!
            return HTTPResponse(status: code, body: Array("status \(code)".utf8))
        default:
            var headers: [(String, String)] = [
                ("content-type", "application/octet-stream"),
                ("x-method", request.method),
                ("x-path", request.path),
                ("x-query", request.query),
                ("x-remote", request.head.remoteAddress),
            ]
            for (name, value) in request.headers {
                headers.append(("x-echo-\(name)", value))
            }
            return HTTPResponse(status: 200, headers: headers, body: request.body)
        }
    }

    func bodyLimit(for head: HTTPRequestHead) -> Int { limit }

    /// A request whose query has `brief=1` (`HTTPResponder.runsBriefly`).
    func runsBriefly(_ head: HTTPRequestHead) -> Bool {
        Self.parameters(head.query)["brief"] == "1"
    }

    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/plain")],
                     body: Array("error \(status): \(reason)".utf8))
    }

    /// Deterministic bytes, so a large body can be checked without shipping it around.
    static func pattern(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 13)
            }
            initialized = count
        }
    }

    static func parameters(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return result
    }
}

/// FNV-1a, 64 bits: a cheap checksum for large bodies.
func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash &*= 0x100_0000_01b3
    }
    return hash
}
