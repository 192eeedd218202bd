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

    /// Copies every file of `source` into `target` (directories 0700, files 0600, each written
    /// to a temporary name, synced and renamed), overwriting files of the same path.
    /// `created` receives each path that did not exist before, so a failed copy can take them back.
    static func copy(from source: String, to target: String, created: inout [String],
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
            guard rename(temporary, destination) == 0 else {
                unlink(temporary)
                throw StoreCopyError(.verification, "cannot move \(temporary) into place: \(String(cString: strerror(errno)))")
            }
            if !existed { created.append(destination) }
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
