import Foundation
import Synchronization
import TandemCore
import TandemStore

/// One line per request to standard error, buffered and written by a background thread so
/// workers never wait on the terminal:
/// `2026-11-29T12:00:00.123Z POST /database/1/... 200 812us 345B <uuid>`.
///
/// What waits to be written is bounded (`capacity`, 4 MiB): while standard error takes nothing
/// (a terminal paused with Ctrl-S, a full pipe) and requests keep coming (a flood answers tens
/// of thousands a second), request lines beyond it are left out and counted, and the next
/// write says how many (decisions E42). Operator messages are always kept.
public final class RequestLog: Sendable {
    /// Bytes waiting to be written, and request lines left out since the last write.
    private let buffer = Locked<(bytes: [UInt8], dropped: Int)>(([], 0))
    private let enabled: Bool
    private let descriptor: Int32
    private let capacity: Int
    private let stopped = Atomic<Bool>(false)
    /// The last 1,000 requests, for the console's live log (filled even when lines are not printed).
    let recent = RecentRequests(capacity: 1000)

    public static let defaultCapacity = 4 << 20

    /// `descriptor`: where lines go (standard error; tests pass a pipe). `capacity`: bytes that
    /// may wait to be written before request lines are left out.
    public init(enabled: Bool, descriptor: Int32 = 2, capacity: Int = RequestLog.defaultCapacity) {
        self.enabled = enabled
        self.descriptor = descriptor
        self.capacity = capacity
        guard enabled else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                usleep(50_000)
                flush()
            }
            flush()
        }
        thread.name = "tandem-log"
        thread.start()
    }

    func record(method: String, path: String, status: Int, microseconds: Int, bytes: Int, uuid: String) {
        recent.append(time: Clock.milliseconds(), method: method, path: path, status: status, microseconds: microseconds, uuid: uuid)
        guard enabled else { return }
        let line = "\(LogTimestamp.now()) \(method) \(path) \(status) \(microseconds)us \(bytes)B \(uuid)\n"
        buffer.withLock { buffer in
            guard buffer.bytes.count + line.utf8.count <= capacity else {
                buffer.dropped += 1
                return
            }
            buffer.bytes.append(contentsOf: line.utf8)
        }
    }

    /// A message for operators (errors with their detail, start and stop).
    public func message(_ message: String) {
        let line = "\(LogTimestamp.now()) \(message)\n"
        buffer.withLock { $0.bytes.append(contentsOf: line.utf8) }
        if !enabled { flush() }
    }

    public func flush() {
        let pending = buffer.withLock { buffer -> [UInt8] in
            var out = buffer.bytes
            if buffer.dropped > 0 {
                out += "\(LogTimestamp.now()) \(buffer.dropped) request lines were left out: standard error took nothing while \(capacity) bytes of them waited\n".utf8
                buffer.dropped = 0
            }
            buffer.bytes.removeAll(keepingCapacity: true)
            return out
        }
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
    }

    public func stop() {
        stopped.store(true, ordering: .relaxed)
        flush()
    }
}
