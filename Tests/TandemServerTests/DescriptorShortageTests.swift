import Foundation
import Synchronization
import Testing
import TandemCore
import TandemTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `tandem serve` out of descriptors (decisions E34): lws 4.1.6 failed `accept` with `EMFILE`
/// on every pass of its loop, so the server spun at 100% CPU, logged about 20 MB a second and
/// answered nobody until its silent connections timed out after 30 s (stop 44's review). Now it
/// closes the oldest connections waiting for a request and refuses what waits beyond them.
@Suite struct DescriptorShortageTests {
    @Test func aServerOutOfDescriptorsKeepsAnsweringWithoutSpinningOrFloodingItsLog() throws {
        // 256 descriptors for the server; 600 connections that send nothing.
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        let process = try #require(server.process)
        // A keep-alive client busy all along, a request every 5 ms on one connection (made again
        // when closed): chosen for closing while idle, its next request used to come before the
        // close, and the server, waiting for that close, spun on `accept` again (stop 44's
        // second review, 3 of 3 runs).
        let busy = Atomic<Bool>(true)
        let client = Thread { Self.keepAliveClient(port: server.port, while: busy) }
        client.start()
        defer { busy.store(false, ordering: .relaxed) }
        Thread.sleep(forTimeInterval: 0.2)
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<600 {
            sockets.append(try #require(Self.connection(port: server.port, waiting: false), "connect: errno \(errno)"))
        }
        Thread.sleep(forTimeInterval: 1)

        // Not spinning: under half a core over two seconds (before: all of one).
        let log = { (process.isRunning ? "" : "exit \(process.terminationStatus) reason \(process.terminationReason.rawValue); ")
            + (server.standardError?.value.suffix(3000) ?? "") }
        let before = try #require(Self.cpuTicks(process.processIdentifier), "the server ended: \(log())")
        Thread.sleep(forTimeInterval: 2)
        let ticks = try #require(Self.cpuTicks(process.processIdentifier), "the server ended: \(log())") - before
        #expect(ticks < 100, "\(ticks) CPU ticks (1/100 s) in 2 s")

        // A new client still gets in, at once rather than after the 30 s silence. (On a new
        // connection: URLSession's kept-alive one, the oldest waiting, was among those closed.)
        let started = Date()
        let answer = try Self.fetch("/healthz", port: server.port)
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer) fds \(descriptors) \(log())")
        #expect(Date().timeIntervalSince(started) < 5)

        // One line says what was done; lws' own line is not repeated.
        let fullLog = server.standardError?.value ?? ""
        // Connections stop short of the descriptor limit (256 less those open at the start and
        // 64 kept for the rest of the server): the store and libdispatch still get theirs
        // (libdispatch crashed the server 1 run in about 15 when connections took them all).
        let limit = Self.connectionLimit(in: fullLog)
        #expect(limit.map { $0 > 64 && $0 < 192 } == true, "limit \(String(describing: limit)): \(log())")
        #expect(!fullLog.contains("out of descriptors"), "\(log())")
        #expect(!fullLog.contains("accept: errno"), "\(log())")
        // (The access log has a line for each of the busy client's requests.)
        let shortageLines = fullLog.split(separator: "\n").filter { $0.contains("connection limit") || $0.contains("out of descriptors") || $0.contains("libwebsockets:") }
        #expect(shortageLines.count <= 2, "\(shortageLines.count) lines: \(shortageLines.prefix(5))")
    }

    @Test func theStoreKeepsAnsweringWhileConnectionsFillTheLimit() throws {
        // Stop 44's review: under 256 descriptors with the connections at their limit, the
        // store could not open a connection for a reading thread, nor its WAL, nor the
        // writer's statement journal (a temporary file), and 42,457 lookups of 78,358 were
        // answered 503 "the database cannot be reached"; creates failed the same way.
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        let seeded = try server.post("records/modify", ["operations": [["operationType": "create", "record": [
            "recordType": "Note", "recordName": "seed", "fields": ["title": ["value": "seed"]]]]]])
        try #require(seeded.status == 200, "\(seeded.text)")
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<600 {
            sockets.append(try #require(Self.connection(port: server.port, waiting: false), "connect: errno \(errno)"))
        }
        Thread.sleep(forTimeInterval: 0.5)

        // 48 clients at once (more threads than the store keeps reading connections for under
        // this limit), creates and lookups in turn, each answer's request and status one line.
        // A new connection may be closed unanswered while the server makes room ("000"): that
        // is how a flood is met. Every request answered must be answered 200.
        let creates = 300
        var config = ""
        for index in 0..<creates {
            let create = #"{"operations": [{"operationType": "create", "record": {"recordType": "Note", "recordName": "flood-\#(index)", "fields": {"title": {"value": "x"}}}}]}"#
            for (operation, body) in [("modify", create), ("lookup", #"{"records": [{"recordName": "seed"}]}"#)] {
                config += "url = \"\(server.databaseURL("records/" + operation))\"\n"
                    + "data = \"\(body.replacingOccurrences(of: "\"", with: "\\\""))\"\n"
                    + "header = \"Authorization: Bearer \(server.token)\"\nheader = \"Content-Type: application/json\"\n"
                    + "output = \"/dev/null\"\nwrite-out = \"%{urlnum} %{http_code}\\n\"\nnext\n"
            }
        }
        let directory = try ExitCleanup.temporaryDirectory("tandem-flood")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try config.write(toFile: directory + "/requests", atomically: true, encoding: .utf8)
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "--parallel", "--parallel-max", "48", "--max-time", "30", "-K", directory + "/requests"]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        _ = curl.waitForTermination()
        let answers = lines.compactMap { line -> (request: Int, status: String)? in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let request = Int(parts[0]) else { return nil }
            return (request, String(parts[1]))
        }
        #expect(answers.count == 2 * creates, "\(lines.prefix(5))")
        let statuses = Dictionary(grouping: answers.map(\.status), by: { $0 }).mapValues(\.count)
        let failures = (server.standardError?.value ?? "").split(separator: "\n").filter { $0.contains("request ") }.prefix(3)
        #expect(Set(statuses.keys).isSubset(of: ["200", "000"]), "\(statuses) \(failures)")
        #expect(statuses["200", default: 0] >= creates, "\(statuses)")

        // Every create answered 200 is stored.
        let created = answers.filter { $0.request % 2 == 0 && $0.status == "200" }.map { $0.request / 2 }
        for batch in stride(from: 0, to: created.count, by: 100) {
            let names = created[batch..<min(batch + 100, created.count)].map { JSONValue.object(["recordName": .string("flood-\($0)")]) }
            let found = try server.post("records/lookup", ["records": .array(names)])
            let stored = found.json["records"]?.arrayValue?.filter { $0["recordChangeTag"] != nil }.count
            #expect(stored == names.count, "\(found.text.prefix(300))")
        }
    }

    /// Stop 44's third review: a client that reopens every connection the server closes, 250 at
    /// a time, took the server past its connection limit to its last descriptor (new
    /// connections were kept while closes were pending), lws failed `accept` about 240,000
    /// times a second and `/healthz` was refused 10 times in 10. Now a connection past the
    /// limit takes the place of one that only waits, or is refused before lws takes it.
    @Test func aClientReopeningEveryClosedConnectionKeepsNobodyOut() throws {
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        let process = try #require(server.process)
        let running = Atomic<Bool>(true)
        let flood = Thread { Self.reopeningFlood(port: server.port, sockets: 250, while: running) }
        flood.start()
        defer { running.store(false, ordering: .relaxed) }
        Thread.sleep(forTimeInterval: 0.5)
        // One WebSocket opened during the flood (stop 44's sixth review: its head deadline's
        // entry held the front of the queue for 5 s, and no room was made meanwhile).
        let stream = try #require(Self.connection(port: server.port, receiveTimeout: 5))
        defer { close(stream) }
        let upgrade = Array(("GET /stream/1/\(TestServer.container)/development HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Authorization: Bearer \(server.token)\r\n\r\n").utf8)
        var reply = [UInt8](repeating: 0, count: 512)
        let replied = send(stream, upgrade, upgrade.count, Int32(MSG_NOSIGNAL)) == upgrade.count ? recv(stream, &reply, reply.count, 0) : -1
        #expect(replied > 0 && String(decoding: reply[..<max(0, replied)], as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        Thread.sleep(forTimeInterval: 0.5)
        var answers: [String] = []
        var mostDescriptors = 0
        for _ in 0..<10 {
            // A new connection the server takes before its request has arrived looks like the
            // flood's; when too many closes are pending it is refused, and a client tries again
            // (CI under load: 1 check in 10 needed a second try). Three tries each.
            var answer = "no answer"
            for _ in 0..<3 where answer != "HTTP/1.1 200" {
                answer = String((try? Self.fetch("/healthz", port: server.port))?.prefix(12) ?? "no answer")
            }
            answers.append(answer)
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? 0
            mostDescriptors = max(mostDescriptors, open)
            Thread.sleep(forTimeInterval: 0.2)
        }
        running.store(false, ordering: .relaxed)
        let log = server.standardError?.value ?? ""
        // A CI run under load once saw every check time out and 308 descriptors in a server
        // limited to 256 (its process gone, the port and the pid someone else's?): say which.
        #expect(answers.allSatisfy { $0 == "HTTP/1.1 200" },
                "\(answers); server running: \(process.isRunning); its log: \(log.suffix(1500))")
        // Short of the limit by the closes pending at most, never at it.
        #expect(mostDescriptors < 240, "\(mostDescriptors) descriptors open")
        #expect(!log.contains("out of descriptors"), "\(log.suffix(2000))")
    }

    /// Stop 44's fourth review: under such a flood, kept-alive connections idle for a moment
    /// were closed to make room before the flood's silent ones (5 of 5), and every SDK request
    /// after a pause failed. Silent connections go first.
    @Test func idleKeptAliveConnectionsOutlastAFloodOfSilentOnes() throws {
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var kept: [Int32] = []
        defer { kept.forEach { close($0) } }
        for _ in 0..<5 {
            let socket = try #require(Self.connection(port: server.port, receiveTimeout: 5))
            kept.append(socket)
            #expect(send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count && recv(socket, &buffer, buffer.count, 0) > 0)
        }
        let running = Atomic<Bool>(true)
        let flood = Thread { Self.reopeningFlood(port: server.port, sockets: 300, while: running) }
        flood.start()
        defer { running.store(false, ordering: .relaxed) }
        Thread.sleep(forTimeInterval: 2.5)
        var answers: [String] = []
        for socket in kept {
            let sent = send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count
            let count = sent ? recv(socket, &buffer, buffer.count, 0) : -1
            answers.append(count > 0 ? String(decoding: buffer[..<min(count, 12)], as: UTF8.self) : "closed")
        }
        #expect(answers.allSatisfy { $0 == "HTTP/1.1 200" }, "\(answers)")
    }

    /// Stop 44's fourth review: 160 POSTs to `/signin` whose bodies trickled in held every
    /// connection until their 10 s deadline (a request in progress is never closed to make
    /// room), and `/healthz` was refused every time. At the limit, bodies arriving slower than
    /// the minimum rate for a second are answered 408.
    @Test func slowBodiesDoNotHoldEveryConnection() throws {
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        let head = Array("POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nemail=".utf8)
        var slow: [Int32] = []
        defer { slow.forEach { close($0) } }
        for _ in 0..<170 {
            guard let socket = Self.connection(port: server.port, receiveTimeout: 1) else { break }
            slow.append(socket)
            _ = send(socket, head, head.count, Int32(MSG_NOSIGNAL))
        }
        Thread.sleep(forTimeInterval: 1.5)
        var answers: [String] = []
        for _ in 0..<5 {
            answers.append(String((try? Self.fetch("/healthz", port: server.port))?.prefix(12) ?? "no answer"))
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(answers.allSatisfy { $0 == "HTTP/1.1 200" }, "\(answers) \(server.standardError?.value.suffix(1500) ?? "")")
    }

    /// Keeps `sockets` connections to the server open, sending nothing, and opens a new one for
    /// each the server closes, at once, while `running` holds.
    static func reopeningFlood(port: Int, sockets count: Int, while running: borrowing Atomic<Bool>) {
        var descriptors = (0..<count).compactMap { _ in Self.connection(port: port, waiting: false) }
        defer { descriptors.forEach { close($0) } }
        var byte: UInt8 = 0
        while running.load(ordering: .relaxed) {
            var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 100) > 0 else { continue }
            for (index, entry) in polled.enumerated() where entry.revents != 0 {
                guard recv(entry.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 else { continue }
                close(entry.fd)
                descriptors[index] = Self.connection(port: port, waiting: false) ?? -1
            }
            descriptors.removeAll { $0 < 0 }
        }
    }

    /// The connection limit of the server's log line, nil when it has none.
    /// Review 53: a server that had held thousands of connections kept their memory after
    /// they closed (glibc's arenas: 178 MiB resident after 12,000, 41 MiB before). Once a
    /// flood has passed, the server gives it back (decisions E38).
    @Test func memoryHeldByAFloodOfConnectionsIsGivenBackWhenItPasses() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let count = 4_000
        try #require(limit.rlim_max >= 8_192, "the test needs 8,192 descriptors; the hard limit is \(limit.rlim_max)")
        if limit.rlim_cur < 8_192 {
            limit.rlim_cur = 8_192
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=8192:8192"] })
        let pid = try #require(server.process).processIdentifier
        _ = try Self.fetch("/healthz", port: server.port)
        let before = try #require(Self.residentKiB(pid))
        // Each connection sends half a head, so lws holds a header buffer for it too.
        let half = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(String(repeating: "a", count: 1_500))".utf8)
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<count {
            let socket = try #require(Self.connection(port: server.port), "connect: errno \(errno)")
            _ = send(socket, half, half.count, Int32(MSG_NOSIGNAL))
            sockets.append(socket)
        }
        var held = 0
        for _ in 0..<40 where held < count {
            Thread.sleep(forTimeInterval: 0.25)
            held = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
        }
        Thread.sleep(forTimeInterval: 0.5)
        let peak = try #require(Self.residentKiB(pid))
        try #require(peak - before > 10_000, "\(held) descriptors open; resident \(before) KiB before, \(peak) KiB with the flood")
        sockets.forEach { close($0) }
        sockets = []
        var after = peak
        for _ in 0..<40 where after > before + (peak - before) / 2 {
            Thread.sleep(forTimeInterval: 0.5)
            after = try #require(Self.residentKiB(pid))
        }
        #expect(after <= before + (peak - before) / 2, "resident \(before) KiB before, \(peak) KiB with \(count) connections, \(after) KiB 20 s after")
        #expect(try Self.fetch("/healthz", port: server.port).hasPrefix("HTTP/1.1 200"))
    }

    /// `VmRSS` of `/proc/PID/status`, in KiB.
    static func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
    }

    static func connectionLimit(in log: String) -> Int? {
        guard let start = log.range(of: "at its connection limit (") else { return nil }
        return Int(log[start.upperBound...].prefix { $0.isNumber })
    }

    /// GETs `/healthz` every 5 ms on one kept-alive connection, connecting again when the
    /// server closes it, while `running` holds.
    static func keepAliveClient(port: Int, while running: borrowing Atomic<Bool>) {
        let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var socket: Int32 = -1
        while running.load(ordering: .relaxed) {
            if socket < 0 {
                guard let made = Self.connection(port: port, receiveTimeout: 2) else { usleep(5_000); continue }
                socket = made
            }
            if send(socket, request, request.count, Int32(MSG_NOSIGNAL)) != request.count || recv(socket, &buffer, buffer.count, 0) <= 0 {
                close(socket)
                socket = -1
            }
            usleep(5_000)
        }
        if socket >= 0 { close(socket) }
    }

    /// The answer to a GET of `path` on a connection of its own (at most 5 s).
    static func fetch(_ path: String, port: Int) throws -> String {
        let socket = try #require(Self.connection(port: port, receiveTimeout: 5), "connect: errno \(errno)")
        defer { close(socket) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        try #require(send(socket, request, request.count, 0) == request.count)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            let code = errno
            guard count > 0 else { if count < 0 { answer += Array("recv errno \(code)".utf8) }; break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// A TCP socket to 127.0.0.1:`port`: connected, its reads timing out after
    /// `receiveTimeout` s (0: never); or, when not `waiting`, non-blocking and still connecting.
    /// nil (and `errno`) when it cannot be made. `prepare` sets options on the socket before
    /// it connects (buffer and segment sizes).
    static func connection(port: Int, receiveTimeout: Int = 0, waiting: Bool = true, prepare: (Int32) -> Void = { _ in }) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        prepare(socket)
        if !waiting { _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK) }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 || (!waiting && errno == EINPROGRESS) else {
            let code = errno
            close(socket)
            errno = code
            return nil
        }
        return socket
    }

    /// The process's user and system CPU time in clock ticks (`/proc/PID/stat` fields 14 and 15).
    /// nil once the process has ended.
    static func cpuTicks(_ pid: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After "pid (comm)": field 3 is the first; 14 and 15 are the 12th and 13th.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}
