import Glibc
import CWebSockets

/// Tells whether libwebsockets took a request head from bytes it had already read ahead,
/// the one case in which lws 4.1 cannot be given a request that has a body.
///
/// ## Why
///
/// lws reads up to `pt_serv_buf_size` bytes at a time. When the bytes after a request's end
/// already hold the next request (HTTP/1.1 pipelining), it keeps them on the connection's
/// read-ahead list and parses them, without reading the socket, once the first transaction is
/// completed. If that buffered request has a body, lws 4.1.6 goes wrong: `lws_http_action()`
/// (lib/roles/http/server/server.c), right after `LWS_CALLBACK_HTTP`, drains "the stream
/// wsi's own buflist" (meant for h2 streams) by calling `lws_read_h1()` on it, but for h1
/// that list still starts at the head being parsed. So the request's own head bytes are
/// handed over as its body (`HTTP_BODY` with `"POST /..."`), then, with the body complete,
/// the loop calls `lws_read_h1()` on the rest forever: every call raises
/// `HTTP_BODY_COMPLETION` again and consumes nothing. The service thread spins inside
/// `lws_service()`; no other connection is served and shutdown never gets its turn. (A
/// request lws reads from the socket itself is not affected: the list is empty then.)
///
/// Nothing a callback can do inside that loop ends it safely: returning non-zero there makes
/// lws free the connection while the outer `lws_read_h1()` still uses it. The only safe way
/// out is before the loop, by refusing the request in `LWS_CALLBACK_HTTP`, which lws answers
/// by closing the connection. Public lws API does not say whether a head came from read-ahead,
/// but the kernel can: lws (4.1, no TLS) reads the socket only when its read-ahead list is
/// empty, so if it has read nothing from the socket since the previous transaction completed,
/// the new head came out of bytes it already held.
///
/// ## How
///
/// `tcpi_bytes_received` (TCP_INFO) minus `FIONREAD` is what the application has read from
/// the socket so far (the kernel counts a received FIN as one byte of the former, so one is
/// taken off once the connection's state, `tcpi_state`, says a FIN came). A mark is
/// taken when a transaction completes, erring high; a later reading, erring low, that is not
/// above the mark means lws has read nothing in between. The errors only go the safe way: at
/// worst a request lws read itself is taken for read-ahead, which can only happen when the
/// client sent it before the previous response was complete, i.e. when it pipelines anyway.
enum ReadAhead {
    /// Where `tcpi_bytes_received` sits in Linux's `struct tcp_info` (glibc's copy of the
    /// struct stops before it). Part of the kernel ABI since Linux 4.1.
    private static let bytesReceivedOffset = 128
    /// Where `tcpi_notsent_bytes` sits (Linux 4.6 on).
    private static let notSentOffset = 144
    private static let tcpInfoCapacity = 256
    /// `TCP_ESTABLISHED` in `tcpi_state` (linux/tcp_states.h).
    private static let established: UInt8 = 1

    /// The mark, and what the same reading of the kernel tells of the socket when a
    /// transaction completes (`ServiceLoop.finishResponse`).
    struct Mark {
        /// What the application had read from the socket; `nil` if the kernel cannot tell (then
        /// every later request with a body is treated as read-ahead).
        var read: UInt64?
        /// The socket holds input lws has not read, bytes or a FIN (`true` when the kernel
        /// cannot tell): `POLLIN` is then set (E41).
        var inputWaiting: Bool
        /// Bytes of the response the kernel has not sent yet (`tcpi_notsent_bytes`): the client
        /// is still reading it (E45).
        var unsent: Int
    }

    /// A reading taken while bytes arrive is not exact, and the mark must then err high (the
    /// safe side), by up to what arrived: on loopback one 64 KiB segment, more than lws' first
    /// read of the next request (65,520 bytes). A client that sends a request with a body the
    /// moment it has the answer (its next segment arriving while the mark is taken) then had
    /// the request refused as read-ahead and its connection closed unanswered (review 64:
    /// 1 upload in 45). So the reading is taken again, 100 µs apart, up to `settleAttempts`
    /// times, until it is exact.
    static func mark(_ wsi: OpaquePointer) -> Mark {
        let fd = lws_get_socket_fd(wsi)
        var reading = applicationRead(fd)
        for _ in 1..<settleAttempts {
            guard let read = reading, !read.exact else { break }
            usleep(100)
            reading = applicationRead(fd)
        }
        guard let read = reading else { return Mark(read: nil, inputWaiting: true, unsent: 0) }
        return Mark(read: read.exact ? read.bytes : read.bytes + read.slack, inputWaiting: read.unread > 0 || read.finReceived,
                    unsent: Int(read.unsent))
    }

    /// Whether lws has read nothing from the socket since `mark` (so a head it just parsed
    /// came out of its read-ahead). Also `true` when the kernel cannot tell.
    ///
    /// A reading taken while the client's bytes are still arriving gives a range: bytes read
    /// are known only to lie between a lower bound and the lower bound plus what arrived
    /// during the reading. On loopback one segment is 64 KiB, as much as lws reads at a time,
    /// so a body arriving behind its head made the lower bound fall to the mark, and the
    /// request was refused as read-ahead: uploads sent right after an answer on a kept
    /// connection were closed unanswered (decisions E46). When the range straddles the
    /// mark the reading is taken again, 100 µs apart, up to `settleAttempts` times (the
    /// socket's buffer fills within that while lws reads nothing), and only then does the
    /// answer err towards "read-ahead", the safe side.
    static func nothingReadSince(_ mark: UInt64?, _ wsi: OpaquePointer) -> Bool {
        guard let mark else { return true }
        let fd = lws_get_socket_fd(wsi)
        for _ in 1..<settleAttempts {
            // No reading (bytes arriving between every pair of calls) is as unsure as a range.
            if let now = applicationRead(fd) {
                switch compare(mark: mark, bytes: now.bytes, exact: now.exact, slack: now.slack, finReceived: now.finReceived) {
                case .readSince: return false
                case .nothingRead: return true
                case .unsure: break
                }
            }
            usleep(100)
        }
        return true
    }

    enum Comparison: Equatable {
        case readSince, nothingRead, unsure
    }

    /// One reading against the mark: the application has read `bytes` (a lower bound unless
    /// `exact`, the truth at most `slack` above it; with one byte for a FIN in it once
    /// `finReceived`). Read since the mark when even the lower bound is past it; nothing read
    /// when the reading is exact, or even the upper bound is not past it; else unsure.
    static func compare(mark: UInt64, bytes: UInt64, exact: Bool, slack: UInt64, finReceived: Bool) -> Comparison {
        // Minus one for a FIN the total includes once one came. Not before: a head of one
        // byte ("G", then nothing) read by lws must count, or its head deadline re-arms for
        // ever and no 400 is sent (review 56).
        let fin: UInt64 = finReceived ? 1 : 0
        let low = bytes.subtractingReportingOverflow(fin)
        if !low.overflow && low.partialValue > mark { return .readSince }
        let high = (bytes &+ slack).subtractingReportingOverflow(fin)
        if exact || high.overflow || high.partialValue <= mark { return .nothingRead }
        return .unsure
    }

    /// Readings taken before a range that straddles the mark counts as "nothing read".
    static let settleAttempts = 20

    /// Bytes the application has read from the socket: TCP's received total minus what is still
    /// queued. Only this thread reads the socket, so the queue only grows while we look; when it
    /// did not grow across the reading the figure is exact, otherwise it is a lower bound and the
    /// truth is at most `slack` above it.
    /// (Before, a mark taken while the client's next request was arriving came out too high and
    /// made ordinary keep-alive requests look like read-ahead: ~0.1% of requests under wrk.)
    /// `finReceived`: the connection is past `ESTABLISHED` (any state after a FIN from the
    /// client, or after our own, which errs towards "read-ahead"). `unread`: bytes queued.
    private static func applicationRead(_ fd: Int32) -> (bytes: UInt64, exact: Bool, slack: UInt64, finReceived: Bool, unread: Int32,
                                                         unsent: UInt32)? {
        var result: (bytes: UInt64, exact: Bool, slack: UInt64, finReceived: Bool, unread: Int32, unsent: UInt32)?
        for _ in 0..<4 {
            guard let before = unreadBytes(fd), let (received, state, unsent) = received(fd), let after = unreadBytes(fd) else { return nil }
            // A segment that came between the two calls can make the queue larger than the
            // total received the first call saw (a 64 KiB one on loopback, against a first read
            // of the request that was smaller): look again (review 64).
            guard received >= UInt64(after) else { continue }
            let grown = UInt64(max(0, after - before))
            result = (received - UInt64(after), grown == 0, grown, state != established, after, unsent)
            if grown == 0 { break }
        }
        return result
    }

    /// Drops whatever the client has already sent that lws has not read, so that closing the
    /// connection sends a FIN rather than a reset (which could destroy responses the client has
    /// not read yet). Reads at most `limit` bytes into `buffer`; never blocks.
    static func discardUnread(_ wsi: OpaquePointer, buffer: UnsafeMutableRawPointer, capacity: Int, limit: Int) {
        let fd = lws_get_socket_fd(wsi)
        var total = 0
        while total < limit {
            let count = recv(fd, buffer, min(capacity, limit - total), Int32(MSG_DONTWAIT))
            if count <= 0 { return }
            total += count
        }
    }

    private static func unreadBytes(_ fd: Int32) -> Int32? {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 && count >= 0 ? count : nil
    }

    /// `tcpi_bytes_received`, `tcpi_state` (the first byte of `struct tcp_info`) and
    /// `tcpi_notsent_bytes` (0 from a kernel before 4.6), from one reading.
    private static func received(_ fd: Int32) -> (bytes: UInt64, state: UInt8, unsent: UInt32)? {
        withUnsafeTemporaryAllocation(byteCount: tcpInfoCapacity, alignment: 8) { info -> (bytes: UInt64, state: UInt8, unsent: UInt32)? in
            info.initializeMemory(as: UInt8.self, repeating: 0)
            var length = socklen_t(tcpInfoCapacity)
            guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, info.baseAddress, &length) == 0,
                  Int(length) >= bytesReceivedOffset + 8 else { return nil }
            let unsent = Int(length) >= notSentOffset + 4 ? info.load(fromByteOffset: notSentOffset, as: UInt32.self) : 0
            return (info.load(fromByteOffset: bytesReceivedOffset, as: UInt64.self), info.load(fromByteOffset: 0, as: UInt8.self), unsent)
        }
    }
}
