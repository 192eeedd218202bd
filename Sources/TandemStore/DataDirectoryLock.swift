import Foundation

/// Who is using a data directory: a server holds a `flock(2)` on it for as long as it runs
/// (shared among the nodes of a cluster, exclusive for a server alone), and `tandem migrate` an exclusive one on both sides' directories for the copy (review
/// 47: a copy taken while the source's server kept writing was verified and reported done, and
/// the writes after its snapshot were not in it). Locks on the directory itself, never on the
/// database file: closing any other descriptor of `tandem.sqlite` would drop SQLite's own
/// POSIX locks. The kernel lets a lock go when its process ends, `kill -9` included.
public enum DataDirectoryLock {
    /// Why a directory could not be locked: the other party holds it.
    public struct Busy: Error, CustomStringConvertible {
        public var directory: String
        public var description: String
    }

    /// Takes a lock on `directory` for the rest of the process, as a server. Shared for a node of
    /// a cluster (`shared`: started with `--bus`; nodes may share one directory, decisions N36);
    /// exclusive for a server alone, which deletes the journal files left in `journal/` at
    /// start (D37) and tells no other process of its changes: a second server alone on the
    /// directory deleted the first one's live session journals (review 58).
    /// - Throws: ``Busy`` while `tandem migrate` copies from or into it, or while another server
    ///   holds it that this one cannot share it with.
    public static func holdWhileServing(_ directory: String, shared: Bool) throws {
        guard let descriptor = lock(directory, shared ? LOCK_SH : LOCK_EX) else {
            let why = shared ? "a tandem server started without --bus, or tandem migrate,"
                             : "another tandem server, or tandem migrate,"
            throw Busy(directory: directory, description: "\(why) is using \(directory): servers share a data directory "
                       + "only as nodes of one cluster, each started with --bus; migrate needs every server stopped")
        }
        _ = descriptor  // Held open, and so locked, until the process ends.
    }

    /// Takes an exclusive lock on each existing directory of `directories` and runs `body`
    /// holding them.
    /// - Throws: ``Busy`` naming the first directory a server (or another migrate) holds.
    public static func whileExclusive<T>(_ directories: [String], _ body: () throws -> T) throws -> T {
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        for directory in Set(directories.map { URL(fileURLWithPath: $0).standardizedFileURL.path }).sorted() {
            guard FileManager.default.fileExists(atPath: directory) else { continue }
            guard let descriptor = lock(directory, LOCK_EX) else {
                throw Busy(directory: directory, description: "a tandem server (or another migrate) is using \(directory): "
                           + "stop it, and every node of its cluster, before migrating")
            }
            held.append(descriptor)
        }
        return try body()
    }

    /// A descriptor of `directory` holding `operation` (without waiting); nil when another
    /// process's lock is in the way. A directory that cannot be opened is not locked (nil
    /// would read as busy): the caller's own open of it reports that.
    private static func lock(_ directory: String, _ operation: Int32) -> Int32? {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        guard flock(descriptor, operation | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            return code == EWOULDBLOCK ? nil : -1
        }
        return descriptor
    }
}
