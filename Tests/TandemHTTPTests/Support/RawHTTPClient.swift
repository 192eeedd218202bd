import Foundation
import TandemHTTP

/// A blocking HTTP/1.1 client over a plain loopback socket, for what URLSession cannot
/// express: exact bytes, pipelining, lying headers, half-sent requests, abrupt closes.
final class RawHTTPClient {
    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to `host` (an IPv4 or IPv6 literal) on `port`; reads time out after `timeout` seconds.
    /// `receiveBuffer` shrinks the socket's receive buffer (a reader that falls behind fast).
    init(host: String = "127.0.0.1", port: Int, timeout: Int = 10, receiveBuffer: Int32? = nil) throws {
        let isIPv6 = host.contains(":")
        fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr(host)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            // deinit still runs for a class whose init throws: mark the descriptor closed so it
            // is not closed twice (the number may already belong to another test's socket).
            close()
            throw Failure(description: "connect: errno \(code)")
        }
        var interval = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close()
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads one response; the body by content-length (none for HEAD when `expectBody` is false).
    func readResponse(expectBody: Bool = true) throws -> Response {
        let headEnd = try readUntilHeadEnd()
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line: \(headText)")
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(name: String(line[..<colon]),
                        value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body: [UInt8] = []
        if expectBody, status >= 200, let length = headers["content-length"].flatMap(Int.init), length > 0 {
            try fill(to: length)
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// Exactly `count` bytes from the connection.
    func read(count: Int) throws -> [UInt8] {
        try fill(to: count)
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// True when the server closes the connection (EOF or reset) within the read timeout.
    func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Closes the sending side only (`shutdown(SHUT_WR)`: a FIN after the request, as `nc -N`
    /// does); the answer can still be read.
    func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Closes with RST instead of FIN (SO_LINGER 0), like a client that vanished.
    func abort() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    private func readUntilHeadEnd() throws -> Int {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4) where buffer[index..<(index + 4)].elementsEqual(terminator) {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            try readMore()
        }
    }

    private func fill(to count: Int) throws {
        while buffer.count < count { try readMore() }
    }

    private func readMore() throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { throw Failure(description: "connection closed by server") }
        if count < 0 { throw Failure(description: "recv: errno \(errno)") }
        buffer.append(contentsOf: chunk[..<count])
    }
}
