import Glibc

/// A response body sent from an open file (`HTTPResponse.file`): the server reads it a chunk
/// at a time (`writeChunkSize`, 256 KiB) on a utility queue as the client takes it, so a
/// download holds at most one chunk in memory, and the service thread never waits on the disk.
///
/// Owns `descriptor` from `init` on and closes it when the last reference goes (the response
/// written, or its connection gone). A file that comes out shorter than `range` while it is
/// read closes the connection: its `content-length` was already sent.
public final class HTTPFileBody: Sendable {
    public let descriptor: Int32
    /// The bytes of the file to send.
    public let range: Range<Int>

    /// Takes `descriptor` (opened for reading); sends `range` of it.
    public init(adopting descriptor: Int32, range: Range<Int>) {
        self.descriptor = descriptor
        self.range = range
    }

    /// Opens `path` read-only; with its size (bytes) for choosing a range. `nil` (and `errno`)
    /// when it cannot be opened or is not a regular file.
    public static func open(path: String) -> (descriptor: Int32, size: Int)? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            let code = errno
            close(descriptor)
            errno = code
            return nil
        }
        return (descriptor, Int(status.st_size))
    }

    deinit {
        close(descriptor)
    }
}
