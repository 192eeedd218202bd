internal import Foundation
internal import TandemCrypto
internal import TandemStore

/// The files of a data directory that a copy carries: every regular file under it (`assets/`,
/// `avatars/`, `journal/`, `secret.key`, which signs change tokens) except the SQLite
/// database's own files and the PostgreSQL marker (``TandemStore/PostgresMarker``) at its top
/// and the `tmp/` folders of uploads in progress.
enum DataFiles {
    /// The SQLite database's files, which the table copy carries instead.
    static let databaseFiles: Set<String> = ["tandem.sqlite", "tandem.sqlite-wal", "tandem.sqlite-shm", "tandem.sqlite-journal"]

    /// Relative paths of the files under `directory`, sorted; none when it does not exist.
    static func list(_ directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            let components = relative.split(separator: "/")
            // The PostgreSQL marker says where a directory's store is (P57): not data to carry.
            if components.contains("tmp") || (components.count == 1 && (databaseFiles.contains(relative) || relative == PostgresMarker.fileName)) { continue }
            var info = stat()
            guard lstat(directory + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            files.append(relative)
        }
        return files.sorted()
    }

    /// A copied file: its path, size and SHA-256 (hex) as read from the source.
    struct Copied {
        var path: String
        var bytes: Int
        var checksum: String
    }

    /// What a copy of files changed in the target, so that a failed copy can put it back: the
    /// paths it made, and the paths it replaced, whose old file is kept beside them (a hard link,
    /// `PATH.tandem-migrate-old`) until the copy is kept (review 49: a failed `--force` copy
    /// rolled the rows back but left the target's `secret.key` replaced, so its clients' tokens
    /// no longer verified).
    struct Undo {
        var created: [String] = []
        var replaced: [String] = []

        static func old(_ path: String) -> String { path + ".tandem-migrate-old" }

        /// Puts the target's files back as they were.
        func takeBack() {
            for path in created.reversed() { unlink(path) }
            for path in replaced.reversed() { rename(Self.old(path), path) }
        }

        /// Lets the old files go: the copy stands, and nothing takes it back from here on.
        mutating func keep() {
            for path in replaced { unlink(Self.old(path)) }
            created = []
            replaced = []
        }
    }

    /// Copies every file of `source` into `target` (directories 0700, files 0600, each written
    /// to a temporary name, synced and renamed), overwriting files of the same path; `undo`
    /// records what changed.
    static func copy(from source: String, to target: String, undo: inout Undo,
                     progress: (_ done: Int, _ total: Int, _ bytes: Int) -> Void) throws -> [Copied] {
        try DataDirectory.prepare(target)
        let paths = list(source)
        var copied: [Copied] = []
        var bytes = 0
        for (index, relative) in paths.enumerated() {
            let destination = target + "/" + relative
            let folder = (destination as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let existed = FileManager.default.fileExists(atPath: destination)
            let temporary = destination + ".tandem-migrate"
            let file = try copyFile(source + "/" + relative, to: temporary)
            if existed {
                unlink(Undo.old(destination))
                guard link(destination, Undo.old(destination)) == 0 else {
                    unlink(temporary)
                    throw StoreCopyError(.verification, "cannot keep \(destination) aside: \(String(cString: strerror(errno)))")
                }
                undo.replaced.append(destination)
            }
            guard rename(temporary, destination) == 0 else {
                unlink(temporary)
                throw StoreCopyError(.verification, "cannot move \(temporary) into place: \(String(cString: strerror(errno)))")
            }
            if !existed { undo.created.append(destination) }
            copied.append(Copied(path: relative, bytes: file.bytes, checksum: file.checksum))
            bytes += file.bytes
            progress(index + 1, paths.count, bytes)
        }
        return copied
    }

    /// The SHA-256 (hex) and size of the file at `path`, read in 1 MiB pieces.
    static func checksum(_ path: String) throws -> (bytes: Int, checksum: String) {
        guard let input = FileHandle(forReadingAtPath: path) else { throw StoreCopyError(.verification, "cannot read \(path)") }
        defer { try? input.close() }
        let digest = Digest.SHA256Stream()
        var bytes = 0
        while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty {
            piece.withUnsafeBytes { digest.update($0) }
            bytes += piece.count
        }
        return (bytes, Digest.hex(digest.finish()))
    }

    private static func copyFile(_ source: String, to destination: String) throws -> (bytes: Int, checksum: String) {
        guard let input = FileHandle(forReadingAtPath: source) else { throw StoreCopyError(.source, "cannot read \(source)") }
        defer { try? input.close() }
        unlink(destination)
        guard FileManager.default.createFile(atPath: destination, contents: nil, attributes: [.posixPermissions: 0o600]),
              let output = FileHandle(forWritingAtPath: destination) else {
            throw StoreCopyError(.verification, "cannot write \(destination)")
        }
        defer { try? output.close() }
        let digest = Digest.SHA256Stream()
        var bytes = 0
        while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty {
            piece.withUnsafeBytes { digest.update($0) }
            try output.write(contentsOf: piece)
            bytes += piece.count
        }
        try output.synchronize()
        return (bytes, Digest.hex(digest.finish()))
    }
}
