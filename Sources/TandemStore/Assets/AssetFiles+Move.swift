import TandemCrypto
import Foundation
import Glibc

extension AssetFiles {
    /// Where a file meant for `store(movingFileAt:)` should be written: the store's own
    /// temporary folder, on the same file system, so storing it is a rename.
    public var temporaryDirectory: String { directory + "/tmp" }

    /// Stores the file at `path` (a request body the HTTP layer spooled) without reading it
    /// into memory: hashed in 1 MiB pieces, fsynced, renamed into place and its directory
    /// fsynced, as `store(_:)` does. The file is gone from `path` afterwards (moved, or deleted
    /// when the same bytes were already stored).
    /// - Returns: the SHA-256 hex checksum and the size in bytes.
    /// - Throws: `AssetFileError` when the file cannot be read, synced or moved.
    public func store(movingFileAt path: String) throws -> (checksum: String, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AssetFileError(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        let stream = Digest.SHA256Stream()
        var size = 0
        let capacity = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, capacity)
            if n < 0 {
                if errno == EINTR { continue }
                throw AssetFileError(operation: "read", path: path, errno: errno)
            }
            if n == 0 { break }
            stream.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            size += n
        }
        let checksum = Digest.hex(stream.finish())
        let finalPath = self.path(forChecksum: checksum)!
        if FileManager.default.fileExists(atPath: finalPath) {
            unlink(path)
            return (checksum, size)
        }
        guard fsync(fd) == 0 else { throw AssetFileError(operation: "fsync", path: path, errno: errno) }
        let folder = (finalPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard rename(path, finalPath) == 0 else { throw AssetFileError(operation: "rename", path: finalPath, errno: errno) }
        let dirFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            close(dirFD)
        }
        return (checksum, size)
    }
}
