import Dispatch
import Glibc
import TandemCore

/// Reads a response's file body (`HTTPFileBody`) ahead of its writes, one chunk at a time, on
/// a utility queue, so the service thread never waits on the disk and a download holds at most
/// one chunk (`chunkSize` bytes) in memory however large its file (review 62: 40 clients that
/// did not read a 50 MiB asset held 2 GiB, the whole file each). The file is open only while
/// a chunk is read.
///
/// The service thread copies what is read into its scratch buffer with `take(into:max:)`; when
/// nothing is read yet it is told `.pending`, and `ready` is called (from the queue) once a
/// chunk is there. The next chunk is read as soon as the last is taken.
final class FileReader: @unchecked Sendable {
    enum Take: Equatable {
        /// Bytes copied.
        case copied(Int)
        /// Nothing read yet: `ready` is called once there is.
        case pending
        /// The file could not be read, or ended before its range did (an `errno`, or 0).
        case failed(Int32)
    }

    private struct State {
        var chunk: [UInt8] = []
        /// Bytes of `chunk` already taken.
        var taken = 0
        /// The file offset of the next read.
        var next: Int
        var reading = false
        var waiting = false
        var failure: Int32?
    }

    private static let queue = DispatchQueue(label: "tandem-http-file-reads", qos: .utility, attributes: .concurrent)

    let body: HTTPFileBody
    private let chunkSize: Int
    private let ready: @Sendable () -> Void
    private let state: Locked<State>

    init(body: HTTPFileBody, chunkSize: Int, ready: @escaping @Sendable () -> Void) {
        self.body = body
        self.chunkSize = chunkSize
        self.ready = ready
        state = Locked(State(next: body.range.lowerBound))
        readNext()
    }

    /// Copies up to `max` bytes of what is read into `destination`.
    func take(into destination: UnsafeMutableRawPointer, max: Int) -> Take {
        let result = state.withLock { state -> Take in
            if let failure = state.failure { return .failed(failure) }
            guard state.taken < state.chunk.count else {
                state.waiting = true
                return .pending
            }
            let count = min(max, state.chunk.count - state.taken)
            state.chunk.withUnsafeBytes { bytes in
                destination.copyMemory(from: bytes.baseAddress! + state.taken, byteCount: count)
            }
            state.taken += count
            return .copied(count)
        }
        if case .copied = result { readNext() }
        return result
    }

    /// Starts reading the next chunk, unless one is being read, the last is not all taken, or
    /// the range is done.
    private func readNext() {
        let start = state.withLock { state -> Int? in
            guard !state.reading, state.failure == nil, state.taken == state.chunk.count,
                  state.next < body.range.upperBound else { return nil }
            state.reading = true
            return state.next
        }
        guard let start else { return }
        Self.queue.async { [self] in read(from: start) }
    }

    /// Tries to open the file while the process is out of descriptors (`EMFILE`, `ENFILE`):
    /// 100 times, 10 ms apart, before the download fails.
    static let openAttempts = 100

    private func read(from start: Int) {
        let count = min(chunkSize, body.range.upperBound - start)
        var chunk = [UInt8](repeating: 0, count: count)
        var filled = 0
        var failure: Int32?
        var descriptor: Int32 = -1
        for attempt in 1...Self.openAttempts {
            descriptor = open(body.path, O_RDONLY | O_CLOEXEC)
            guard descriptor < 0, errno == EMFILE || errno == ENFILE || errno == EINTR, attempt < Self.openAttempts else { break }
            usleep(10_000)
        }
        if descriptor < 0 { failure = errno }
        while descriptor >= 0 && filled < count {
            let n = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(start + filled)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                failure = n < 0 ? errno : 0
                break
            }
            filled += n
        }
        if descriptor >= 0 { close(descriptor) }
        let wake = state.withLock { state -> Bool in
            state.reading = false
            if let failure {
                state.failure = failure
            } else {
                state.chunk = chunk
                state.taken = 0
                state.next = start + count
            }
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { ready() }
    }
}
