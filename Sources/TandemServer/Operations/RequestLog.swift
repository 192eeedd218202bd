import Foundation
import Synchronization
import TandemCore
import TandemStore

/// One line per request to standard error, buffered and written by a background thread so
/// workers never wait on the terminal:
/// `2026-11-29T12:00:00.123Z POST /database/1/... 200 812us 345B <uuid>`.
public final class RequestLog: Sendable {
    private let buffer = Locked<[UInt8]>([])
    private let enabled: Bool
    private let stopped = Atomic<Bool>(false)
    /// The last 1,000 requests, for the console's live log (filled even when lines are not printed).
    let recent = RecentRequests(capacity: 1000)

    public init(enabled: Bool) {
        self.enabled = enabled
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
        buffer.withLock { $0.append(contentsOf: line.utf8) }
    }

    /// A message for operators (errors with their detail, start and stop).
    public func message(_ message: String) {
        let line = "\(LogTimestamp.now()) \(message)\n"
        buffer.withLock { $0.append(contentsOf: line.utf8) }
        if !enabled { flush() }
    }

    public func flush() {
        let pending = buffer.withLock { bytes -> [UInt8] in
            let out = bytes
            bytes.removeAll(keepingCapacity: true)
            return out
        }
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(2, raw.baseAddress! + offset, raw.count - offset)
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
