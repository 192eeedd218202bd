import Foundation

/// The data directory's permissions: the server's records, assets, journal files and token
/// secret are readable by the server's own user only (issue 14).
///
/// A new directory is made `0700`; an existing one is narrowed to `0700` (files made by an
/// earlier version at `0644` become unreachable to others through it). A directory that another
/// user could write to (group or other write bit, or owned by another user) is refused: whoever
/// can write there can replace the database or the secret. Files the store makes are set to
/// `0600`; SQLite gives its `-wal` and `-shm` files the database file's mode. The `tandem`
/// command also sets its umask to `077` at start, so nothing else it creates is shared.
public enum DataDirectory {
    /// Why a data directory is refused.
    public struct UnsafeError: Error, CustomStringConvertible {
        public let path: String
        public let problem: String
        public var description: String {
            "refusing data directory \(path): \(problem); make it owned by this user and not writable by others (chmod 700)"
        }
    }

    /// Creates `path` (mode 0700, with missing parents) or checks and narrows an existing one.
    /// - Throws: ``UnsafeError`` for a directory others can write to; a file error when it
    ///   cannot be created or is not a directory.
    public static func prepare(_ path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw UnsafeError(path: path, problem: "cannot read its status (\(String(cString: strerror(errno))))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw UnsafeError(path: path, problem: "not a directory") }
        guard info.st_uid == geteuid() else {
            throw UnsafeError(path: path, problem: "owned by uid \(info.st_uid), not this process's user (uid \(geteuid()))")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o022 == 0 else {
            throw UnsafeError(path: path, problem: "writable by \(mode & 0o020 != 0 ? "its group" : "others") (mode \(String(mode, radix: 8)))")
        }
        if mode != 0o700, chmod(path, 0o700) != 0 {
            throw UnsafeError(path: path, problem: "cannot set mode 700 (\(String(cString: strerror(errno))))")
        }
    }

    /// Sets each existing file of `paths` to 0600 (the store's files after it opened them).
    public static func restrict(_ paths: [String]) {
        for path in paths where FileManager.default.fileExists(atPath: path) {
            _ = chmod(path, 0o600)
        }
    }
}
