import Foundation
import TandemCore
import TandemStore

/// Erases avatar files nobody holds, and puts back a file a new avatar needs, without relying on
/// the store's writers running one at a time (decisions P6).
///
/// A write that clears or replaces an avatar says which checksum it left unused; a write that
/// sets one stored its file before. Two such writes by different accounts may run together
/// (PostgreSQL), and even on SQLite's group commit both bodies ran before either hook, so an
/// erase decided inside one write could take the file the other had just set. Both steps run
/// after the commit instead, under one lock: `release` erases only if no account holds the
/// checksum now, and `restore` stores the bytes again if a `release` erased them before this
/// avatar's write committed. Whichever runs first, a held avatar keeps its file.
enum AvatarFileKeeper {
    private static let lock = Locked(())

    /// After a committed write that left `checksum` unused: erases its file unless an account
    /// holds it now. A failed read keeps the file (an orphan costs space, not a picture).
    static func release(_ checksum: String, store: any Store) {
        lock.withLock { _ in
            guard let inUse = try? store.read({ try $0.avatarInUse(checksum: checksum) }), !inUse else { return }
            store.avatars.remove(checksum: checksum)
        }
    }

    /// After a committed write that set an avatar of `bytes`: stores them again when a `release`
    /// erased the file since they were stored.
    /// - Throws: the file error when the bytes cannot be stored (a full disk: DiskFull answers).
    static func restore(_ bytes: [UInt8], checksum: String, files: AssetFiles) throws {
        try lock.withLock { _ in
            if let path = files.path(forChecksum: checksum), !FileManager.default.fileExists(atPath: path) {
                _ = try files.store(bytes)
            }
        }
    }
}
