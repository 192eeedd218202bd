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
            // What a copy that was stopped left beside the files it was writing (Undo): not data.
            if relative.hasSuffix(".tandem-migrate") || relative.hasSuffix(".tandem-migrate-old") { continue }
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

    /// The files a copy writes into the target, and what it changed there, so that a copy that
    /// fails leaves the target's files as they were (review 49: a failed `--force` copy rolled
    /// the rows back but left the target's `secret.key` replaced, so its clients' tokens no longer
    /// verified). Files are written beside their place (`PATH.tandem-migrate`) while the rows
    /// copy, and moved into place only once everything is verified, just before the rows commit
    /// (``place()``): a copy stopped before then (review 50: by SIGTERM) changed no file. A
    /// replaced file is kept as `PATH.tandem-migrate-old` until the copy is kept.
    struct Undo {
        var staged: [String] = []
        var created: [String] = []
        var replaced: [String] = []

        static func staging(_ path: String) -> String { path + ".tandem-migrate" }
        static func old(_ path: String) -> String { path + ".tandem-migrate-old" }

        /// Moves every staged file into its place.
        mutating func place() throws {
            for destination in staged {
                let existed = FileManager.default.fileExists(atPath: destination)
                if existed {
                    unlink(Self.old(destination))
                    guard link(destination, Self.old(destination)) == 0 else {
                        throw StoreCopyError(.verification, "cannot keep \(destination) aside: \(String(cString: strerror(errno)))")
                    }
                    replaced.append(destination)
                }
                guard rename(Self.staging(destination), destination) == 0 else {
                    throw StoreCopyError(.verification, "cannot move \(Self.staging(destination)) into place: \(String(cString: strerror(errno)))")
                }
                if !existed { created.append(destination) }
            }
            staged = []
        }

        /// Puts the target's files back as they were.
        func takeBack() {
            for path in staged { unlink(Self.staging(path)) }
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

    /// Copies every file of `source` beside its place in `target` (directories 0700, files 0600,
    /// each synced), checked by SHA-256 against what was read; `undo.place()` moves them in.
    static func stage(from source: String, to target: String, undo: inout Undo,
                      progress: (_ done: Int, _ total: Int, _ bytes: Int) -> Void) throws -> [Copied] {
        try DataDirectory.prepare(target)
        let paths = list(source)
        var copied: [Copied] = []
        var bytes = 0
        for (index, relative) in paths.enumerated() {
            let destination = target + "/" + relative
            let folder = (destination as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let temporary = Undo.staging(destination)
            undo.staged.append(destination)
            let file = try copyFile(source + "/" + relative, to: temporary)
            let written = try checksum(temporary)
            guard written.checksum == file.checksum, written.bytes == file.bytes else {
                throw StoreCopyError(.verification, "file \(relative) differs after the copy (SHA-256 \(written.checksum), the source's \(file.checksum))")
            }
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
