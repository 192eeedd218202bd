import TandemCrypto
import Foundation
import TandemCore

/// Content-addressed asset files: `assets/ab/cd/<sha256 hex>` under the data directory.
///
/// A file is written to `assets/tmp/`, fsynced, renamed into place and its directory fsynced,
/// so a crash leaves either the whole file or none (DESIGN.md §4). Writing the same bytes twice
/// stores them once.
public struct AssetFiles: Sendable {
    public let directory: String

    public init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
    }

    /// The path of the file with this SHA-256 hex checksum (which may not exist).
    public func path(forChecksum checksum: String) -> String? {
        guard checksum.utf8.count == 64, checksum.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            return nil
        }
        let c = Array(checksum)
        return "\(directory)/\(String(c[0..<2]))/\(String(c[2..<4]))/\(checksum)"
    }

    /// Stores `bytes` and returns their SHA-256 hex checksum.
    /// - Throws: `AssetFileError` when the file cannot be written durably.
    public func store(_ bytes: [UInt8]) throws -> String {
        let checksum = Digest.hex(Digest.sha256(bytes))
        let finalPath = path(forChecksum: checksum)!
        if FileManager.default.fileExists(atPath: finalPath) { return checksum }
        let folder = (finalPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = "\(directory)/tmp/\(checksum).\(UUID.random().uuidString)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AssetFileError(operation: "open", path: temporary, errno: errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw AssetFileError(operation: "write", path: temporary, errno: code)
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw AssetFileError(operation: "fsync", path: temporary, errno: code)
        }
        close(fd)
        guard rename(temporary, finalPath) == 0 else {
            let code = errno
            unlink(temporary)
            throw AssetFileError(operation: "rename", path: finalPath, errno: code)
        }
        let dirFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            close(dirFD)
        }
        return checksum
    }

    /// Deletes the file with this checksum, if any (journal files, unused avatars; record
    /// assets are never deleted, as identical bytes share a file).
    public func remove(checksum: String) {
        guard let path = path(forChecksum: checksum) else { return }
        unlink(path)
    }

    /// The bytes of a stored file, or nil if there is none.
    public func read(checksum: String) -> [UInt8]? {
        guard let path = path(forChecksum: checksum), let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](data)
    }
}

/// A failed file operation, with the C error number.
public struct AssetFileError: Error, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}
