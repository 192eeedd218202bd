import Dispatch
import Glibc
import TandemCore

/// A request body on its way to a temporary file, written off the service thread.
///
/// The service thread hands each piece to `append(_:)`, which copies it and queues the write
/// on the spool's own serial queue; it says when more than `window` bytes wait in memory, and
/// the service thread then stops reading the connection until `onDrained` (called from the
/// queue once half the window is written) asks it to resume. So a spooled body holds at most
/// `window` plus one read (lws' 64 KiB buffer) in memory, however fast the client sends.
final class BodySpool: @unchecked Sendable {
    private struct State {
        var fd: Int32 = -1
        var path = ""
        var written = 0
        var pending = 0
        var waitingForDrain = false
        var failure: HTTPBodyFileError?
        var discarded = false
    }

    let window: Int
    private let directory: String
    private let queue = DispatchQueue(label: "tandem-http-body-spool")
    private let state = Locked(State())
    private let onDrained: @Sendable () -> Void
    /// Reports bytes leaving memory (written or dropped), for the server's buffered figure.
    private let released: @Sendable (Int) -> Void

    init(directory: String, window: Int, onDrained: @escaping @Sendable () -> Void, released: @escaping @Sendable (Int) -> Void) {
        self.directory = directory
        self.window = window
        self.onDrained = onDrained
        self.released = released
    }

    /// Queues `bytes` for the file; `true` when the caller should stop reading until drained.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let copy = [UInt8](bytes)
        let over = state.withLock { state -> Bool in
            state.pending += copy.count
            if state.pending > window { state.waitingForDrain = true }
            return state.waitingForDrain
        }
        queue.async { [self] in write(copy) }
        return over
    }

    private func write(_ bytes: [UInt8]) {
        var (fd, failed) = state.withLock { ($0.fd, $0.failure != nil || $0.discarded) }
        if !failed && fd < 0 {
            fd = open()
            failed = fd < 0
        }
        var offset = 0
        while !failed && offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                let reason = String(cString: strerror(code))
                // The partial file goes at once: it would hold space the disk may not have.
                removeFile()
                state.withLock { $0.failure = HTTPBodyFileError(reason: "cannot write the request body to disk: \(reason)", code: code) }
                failed = true
            } else {
                offset += n
            }
        }
        let drained = state.withLock { state -> Bool in
            state.pending -= bytes.count
            if !failed { state.written += bytes.count }
            guard state.waitingForDrain, state.pending <= window / 2 else { return false }
            state.waitingForDrain = false
            return true
        }
        released(bytes.count)
        if drained { onDrained() }
    }

    private func open() -> Int32 {
        var template = Array((directory + "/tandem-body-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        state.withLock { state in
            if fd < 0 {
                let code = errno
                state.failure = HTTPBodyFileError(reason: "cannot create a file for the request body in \(directory): \(String(cString: strerror(code)))",
                                                  code: code)
            } else {
                state.fd = fd
                state.path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return fd
    }

    /// Waits until every queued byte is written (worker thread); the file's path and size.
    func finish() throws(HTTPBodyFileError) -> (path: String, size: Int) {
        queue.sync {}
        let (fd, path, size, failure) = state.withLock { ($0.fd, $0.path, $0.written, $0.failure) }
        if let failure { throw failure }
        if fd < 0 {
            // An empty body never opened a file.
            return queue.sync { () -> (path: String, size: Int) in
                let opened = open()
                return (opened < 0 ? "" : state.withLock { $0.path }, 0)
            }
        }
        return (path, size)
    }

    /// Closes and deletes the file once the queued writes are done; later writes are dropped.
    func discard() {
        state.withLock { $0.discarded = true }
        queue.async { [self] in removeFile() }
    }

    /// Closes the file and deletes it, unless it was renamed away (then its path is gone or
    /// names another file: the one open here is compared by device and inode). Spool queue.
    private func removeFile() {
        let (fd, path) = state.withLock { state -> (Int32, String) in
            defer { state.fd = -1 }
            return (state.fd, state.path)
        }
        guard fd >= 0 else { return }
        var open = stat(), named = stat()
        if fstat(fd, &open) == 0, stat(path, &named) == 0, open.st_dev == named.st_dev, open.st_ino == named.st_ino {
            unlink(path)
        }
        close(fd)
    }
}

/// A request body the server spooled to a temporary file (`HTTPBodyPolicy.spooled`).
///
/// `finish()` waits for the last bytes to reach the file and returns its path and size; the
/// responder reads it or renames it elsewhere. The file is deleted when this object is
/// released (a file renamed away is left alone).
public final class HTTPBodyFile: Sendable {
    let spool: BodySpool

    init(spool: BodySpool) {
        self.spool = spool
    }

    /// The file's path and size in bytes, once all of the body is written.
    /// - Throws: `HTTPBodyFileError` when the body could not be written (disk full, ...).
    public func finish() throws(HTTPBodyFileError) -> (path: String, size: Int) {
        try spool.finish()
    }

    deinit {
        spool.discard()
    }
}

/// Why a spooled body is not available.
public struct HTTPBodyFileError: Error, CustomStringConvertible {
    public var reason: String
    /// The `errno` of the failed system call (`ENOSPC`, `EDQUOT`, ...); 0 when none.
    public var code: Int32
    public var description: String { reason }

    public init(reason: String, code: Int32 = 0) {
        self.reason = reason
        self.code = code
    }
}
