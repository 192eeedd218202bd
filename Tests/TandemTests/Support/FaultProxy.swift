import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of a test server that injects faults into one device's traffic:
/// offline spells, latency, held and dropped answers, duplicated requests. It copies bytes and
/// only peeks at the request line of each request (HTTP/1.1 without pipelining, as URLSession
/// sends, so the bytes after a request are its answer); the stream WebSocket passes through.
final class FaultProxy: @unchecked Sendable {
    /// What the proxy does to answers, by the request path they answer (substring match).
    struct Faults: Sendable {
        /// New connections are closed at once; open ones are closed.
        var offline = false
        /// New requests are not forwarded (their connection is closed), but answers already on
        /// their way (held ones too) still arrive: "offline right after this answer".
        var refuseRequests = false
        /// Answers to these paths wait until `releaseHeld()` (or until going offline).
        var holdPaths: [String] = []
        /// The next answer to one of these paths is dropped (the connection closed instead);
        /// the request reached the server. Each entry is used once.
        var dropNextAnswerPaths: [String] = []
        /// Go offline when a `dropNextAnswerPaths` answer is dropped (the retries fail too).
        var offlineAfterDrop = false
        /// Requests to these paths wait at the proxy (not forwarded) until removed from the list.
        var holdRequestPaths: [String] = []
        /// When a `dropNextAnswerPaths` answer is dropped, hold later requests to that path.
        var holdRequestsAfterDrop = false
        /// Seconds added before each answer.
        var latency: Double = 0
        /// Chance (0...1) that an answer to a `records/` or `changes/` request is dropped.
        var dropRate: Double = 0
        /// Chance that such a request is sent to the server a second time after its answer.
        var duplicateRate: Double = 0
    }

    let port: Int
    private let upstreamPort: @Sendable () -> Int
    private let listener: Int32
    private let lock = NSLock()
    private let condition = NSCondition()
    private var faults = Faults()
    private var held = 0
    private var releaseGeneration = 0
    private var sockets = Set<Int32>()
    private var random: SeededGenerator
    private var stopped = false
    private(set) var droppedAnswers = 0
    private(set) var duplicatedRequests = 0
    /// Told every complete answer the server gave to a request whose line contains one of
    /// `observedPaths`, delivered or not (dropped answers are read to their end first; the
    /// answers to duplicated requests too): (request line, request bytes, answer body).
    private let answerObserver: (@Sendable (String, [UInt8], [UInt8]) -> Void)?
    private let observedPaths: [String]

    init(upstreamPort: @escaping @Sendable () -> Int, seed: UInt64 = 1, observing observedPaths: [String] = ["records/modify"],
         answerObserver: (@Sendable (String, [UInt8], [UInt8]) -> Void)? = nil) throws {
        self.upstreamPort = upstreamPort
        self.answerObserver = answerObserver
        self.observedPaths = observedPaths
        random = SeededGenerator(seed: seed)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw TestFailure("bind/listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Changes the faults; going offline closes every open connection and releases held answers.
    func update(_ body: (inout Faults) -> Void) {
        let (closeAll, toClose) = lock.withLock { () -> (Bool, [Int32]) in
            body(&faults)
            return (faults.offline, faults.offline ? Array(sockets) : [])
        }
        if closeAll { for fd in toClose { shutdown(fd, Int32(SHUT_RDWR)) } }
        condition.lock(); releaseGeneration += 1; condition.broadcast(); condition.unlock()
    }

    var current: Faults { lock.withLock { faults } }

    /// Answers held now (waiting for `releaseHeld()`).
    var heldAnswers: Int { condition.lock(); defer { condition.unlock() }; return held }

    /// Lets held answers through and stops holding.
    func releaseHeld() { update { $0.holdPaths = [] } }

    func stop() {
        let all = lock.withLock { () -> [Int32] in
            if stopped { return [] }
            stopped = true
            return Array(sockets)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in all { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    // MARK: Connections

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            if lock.withLock({ stopped || faults.offline || faults.refuseRequests }) { close(client); continue }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.loopback(port: UInt16(upstreamPort()))
        let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if result != 0 { close(fd); return nil }
        return fd
    }

    /// The request being answered on one connection.
    private final class Exchange: @unchecked Sendable {
        let lock = NSLock()
        var requestLine = ""
        var requestBytes: [UInt8] = []
        var answerBytes: [UInt8] = []
        var answerObserved = false
        var answerStarted = false
        var isStream = false
        var sentAt = Date()
    }

    private func track(_ fds: [Int32]) -> Bool {
        lock.withLock {
            if stopped { return false }
            for fd in fds { sockets.insert(fd) }
            return true
        }
    }

    private func untrack(_ fds: [Int32]) { lock.withLock { for fd in fds { sockets.remove(fd) } } }

    private func serve(_ client: Int32) {
        guard let upstream = connectUpstream() else { close(client); return }
        guard track([client, upstream]) else { close(client); close(upstream); return }
        let exchange = Exchange()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            pumpRequests(from: client, to: upstream, exchange)
            shutdown(upstream, Int32(SHUT_RDWR)); shutdown(client, Int32(SHUT_RDWR))
            done.signal()
        }
        pumpAnswers(from: upstream, to: client, exchange)
        if ProcessInfo.processInfo.environment["TANDEM_PROXY_DEBUG"] != nil {
            exchange.lock.withLock {
                if !exchange.isStream, !exchange.answerStarted, !exchange.requestLine.isEmpty {
                    print("proxy \(port): \(exchange.requestLine) closed unanswered after \(Date().timeIntervalSince(exchange.sentAt)) s; sent \(exchange.requestBytes.count) bytes: \(String(decoding: exchange.requestBytes, as: UTF8.self))")
                }
            }
        }
        shutdown(upstream, Int32(SHUT_RDWR)); shutdown(client, Int32(SHUT_RDWR))
        done.wait()
        untrack([client, upstream])
        close(client); close(upstream)
    }

    private func pumpRequests(from client: Int32, to upstream: Int32, _ exchange: Exchange) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            let chunk = Array(buffer[0..<count])
            if Self.requestLine(chunk) != nil, lock.withLock({ faults.offline || faults.refuseRequests }) { return }
            if let line = Self.requestLine(chunk) {
                while lock.withLock({ faults.holdRequestPaths.contains { line.contains($0) } && !faults.offline && !stopped }) {
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
            exchange.lock.withLock {
                if let line = Self.requestLine(chunk) {
                    exchange.requestLine = line
                    exchange.sentAt = Date()
                    exchange.requestBytes = []
                    exchange.answerBytes = []
                    exchange.answerObserved = false
                    exchange.answerStarted = false
                    if line.hasPrefix("GET /stream/") { exchange.isStream = true }
                }
                if !exchange.isStream { exchange.requestBytes += chunk }
            }
            if let line = Self.requestLine(chunk), let expected = Self.expectedLength(chunk) {
                watchBody(line: line, expected: expected, exchange, client: client, upstream: upstream)
            }
            if !writeAll(upstream, chunk) { return }
        }
    }

    /// Header bytes plus Content-Length, when the chunk holds the whole head.
    private static func expectedLength(_ chunk: [UInt8]) -> Int? {
        let text = String(decoding: chunk, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<end.upperBound]
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        return head.utf8.count + length
    }

    /// swift-corelibs-foundation (curl) sometimes sends a request's head but never its body when
    /// it resends on a fresh connection after a pooled one died (here: one the proxy closed);
    /// the server then waits 30 s. A real network would reset such a connection sooner: so does
    /// the proxy, after 2 s, and the transport retries.
    private func watchBody(line: String, expected: Int, _ exchange: Exchange, client: Int32, upstream: Int32) {
        let sentAt = exchange.lock.withLock { exchange.sentAt }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
            let stuck = exchange.lock.withLock {
                exchange.sentAt == sentAt && !exchange.answerStarted && exchange.requestBytes.count < expected
            }
            if stuck {
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
            }
        }
    }

    private static func requestLine(_ chunk: [UInt8]) -> String? {
        let methods = ["GET ", "POST ", "PUT ", "DELETE ", "PATCH ", "HEAD "]
        let head = String(decoding: chunk.prefix(256), as: UTF8.self)
        guard methods.contains(where: { head.hasPrefix($0) }) else { return nil }
        // "\r\n" is one Character in Swift: cut at the first scalar of either.
        let scalars = head.unicodeScalars.prefix { $0 != "\r" && $0 != "\n" }
        return String(String.UnicodeScalarView(scalars))
    }

    private enum Decision { case pass, drop, hold }

    private func pumpAnswers(from upstream: Int32, to client: Int32, _ exchange: Exchange) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(upstream, &buffer, buffer.count)
            if count <= 0 { return }
            // "100 Continue" (curl's Expect for larger bodies) is not the answer: the body follows.
            let interim = String(decoding: buffer[0..<min(count, 12)], as: UTF8.self).hasPrefix("HTTP/1.1 100")
            let (line, first, isStream, request) = exchange.lock.withLock { () -> (String, Bool, Bool, [UInt8]) in
                defer { if !interim { exchange.answerStarted = true } }
                if ProcessInfo.processInfo.environment["TANDEM_PROXY_DEBUG"] != nil, !exchange.isStream, !exchange.answerStarted,
                   Date().timeIntervalSince(exchange.sentAt) > 2 {
                    print("proxy \(port): \(exchange.requestLine) answered after \(Date().timeIntervalSince(exchange.sentAt)) s")
                }
                return (exchange.requestLine, !exchange.answerStarted && !interim, exchange.isStream, exchange.requestBytes)
            }
            observe(exchange, Array(buffer[0..<count]))
            if !isStream && first {
                var duplicate = false
                let (decision, latency) = lock.withLock { () -> (Decision, Double) in
                    if faults.offline { return (.drop, 0) }
                    if let index = faults.dropNextAnswerPaths.firstIndex(where: { line.contains($0) }) {
                        faults.dropNextAnswerPaths.remove(at: index)
                        if faults.offlineAfterDrop { faults.offline = true }
                        if faults.holdRequestsAfterDrop, let path = ["records/modify", "changes/zone", "changes/database"].first(where: { line.contains($0) }) {
                            faults.holdRequestPaths.append(path)
                        }
                        droppedAnswers += 1
                        return (.drop, 0)
                    }
                    let faultable = line.contains("/records/") || line.contains("/changes/")
                    if faultable, faults.duplicateRate > 0, Double.random(in: 0..<1, using: &random) < faults.duplicateRate {
                        duplicate = true
                        duplicatedRequests += 1
                    }
                    if faultable, faults.dropRate > 0, Double.random(in: 0..<1, using: &random) < faults.dropRate {
                        droppedAnswers += 1
                        return (.drop, faults.latency)
                    }
                    if faults.holdPaths.contains(where: { line.contains($0) }) { return (.hold, faults.latency) }
                    return (.pass, faults.latency)
                }
                if duplicate { replay(request) }
                if latency > 0 { Thread.sleep(forTimeInterval: latency) }
                switch decision {
                case .drop:
                    if lock.withLock({ faults.offline }) { update { _ in } }
                    readToEnd(upstream, exchange)
                    return
                case .hold:
                    if !waitWhileHeld(line) { return }
                case .pass:
                    break
                }
            } else if lock.withLock({ faults.offline }) {
                return
            }
            if !writeAll(client, Array(buffer[0..<count])) { return }
        }
    }

    /// Waits until the answer to `line` is no longer held; false when the proxy went offline.
    private func waitWhileHeld(_ line: String) -> Bool {
        condition.lock()
        held += 1
        condition.broadcast()
        condition.unlock()
        defer { condition.lock(); held -= 1; condition.unlock() }
        while true {
            let (holding, offline) = lock.withLock { (faults.holdPaths.contains { line.contains($0) }, faults.offline || stopped) }
            if offline { return false }
            if !holding { return true }
            condition.lock()
            _ = condition.wait(until: Date().addingTimeInterval(0.05))
            condition.unlock()
        }
    }

    /// Sends a request to the server once more on its own connection (its answer is read and
    /// discarded, after the observer saw it).
    private func replay(_ request: [UInt8]) {
        guard !request.isEmpty else { return }
        Thread.detachNewThread { [self] in
            guard let fd = connectUpstream() else { return }
            defer { close(fd) }
            guard writeAll(fd, request) else { return }
            let exchange = Exchange()
            exchange.requestLine = Self.requestLine(request) ?? ""
            exchange.requestBytes = request
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            readToEnd(fd, exchange)
        }
    }

    // MARK: Observing answers

    /// Adds answer bytes to the exchange and tells the observer once the answer is complete
    /// (interim "100 Continue" answers skipped; the server always sends content-length).
    private func observe(_ exchange: Exchange, _ chunk: [UInt8]) {
        guard let observer = answerObserver else { return }
        let complete = exchange.lock.withLock { () -> (String, [UInt8], [UInt8])? in
            guard !exchange.isStream, !exchange.answerObserved, observedPaths.contains(where: { exchange.requestLine.contains($0) }) else { return nil }
            exchange.answerBytes += chunk
            guard let body = Self.completeBody(&exchange.answerBytes) else { return nil }
            exchange.answerObserved = true
            return (exchange.requestLine, exchange.requestBytes, body)
        }
        if let (line, request, body) = complete { observer(line, request, body) }
    }

    /// Reads the rest of an answer that is not passed on, so the observer still sees it (up to 2 s).
    private func readToEnd(_ fd: Int32, _ exchange: Exchange) {
        guard answerObserver != nil else { return }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !exchange.lock.withLock({ exchange.answerObserved }) {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { return }
            observe(exchange, Array(buffer[0..<count]))
        }
    }

    /// The body of the first final answer in `bytes` once all of it is there (leading interim
    /// answers are removed from `bytes`).
    private static func completeBody(_ bytes: inout [UInt8]) -> [UInt8]? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            guard let end = bytes.firstRange(of: separator) else { return nil }
            let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
            if head.hasPrefix("HTTP/1.1 1") {
                bytes.removeSubrange(..<end.upperBound)
                continue
            }
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            guard bytes.count - end.upperBound >= length else { return nil }
            return Array(bytes[end.upperBound..<(end.upperBound + length)])
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Waits (polling) until an answer is held.
    func waitForHeldAnswer(within seconds: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while heldAnswers == 0 {
            if Date() > deadline { throw TestFailure("no answer was held within \(seconds) s") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}

/// SplitMix64: a small seeded generator, so a seed replays the same choices.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
