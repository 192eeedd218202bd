import Glibc

/// A response body sent from a file (`HTTPResponse.file`): the server reads it a chunk at a
/// time (`writeChunkSize`, 256 KiB) on a utility queue as the client takes it, so a download
/// holds at most one chunk in memory, and the service thread never waits on the disk.
///
/// The file is opened for each chunk and closed again, so a download a client reads slowly,
/// or not at all, holds no descriptor: the server's connection limit counts one descriptor a
/// connection (review 63: with the file held open, 115 unread downloads used every descriptor
/// under a limit of 256). Meant for files that do not change once written (stored assets are
/// named by their checksum). A file that is gone, or ends before `range` does, while it is
/// read closes the connection: its `content-length` was already sent.
public struct HTTPFileBody: Sendable {
    public let path: String
    /// The bytes of the file to send.
    public let range: Range<Int>

    public init(path: String, range: Range<Int>) {
        self.path = path
        self.range = range
    }

    /// The size in bytes of the regular file at `path`; `nil` (and `errno`) when there is none
    /// or it cannot be looked at.
    public static func size(path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            errno = ENOENT
            return nil
        }
        return Int(status.st_size)
    }
}
