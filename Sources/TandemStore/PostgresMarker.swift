import Foundation

/// The file `tandem serve` leaves in its data directory when its store is PostgreSQL
/// (decisions P57): `postgres-store`, one line naming the database's URL without its password.
///
/// An admin command run without `--store` on that directory would otherwise open (and create)
/// a SQLite store there that the server never reads, and report success; with the marker it
/// refuses and names the URL to pass. `tandem migrate` neither copies it (it describes where a
/// directory's store is, not data) nor counts it as data, and leaves one in a PostgreSQL
/// target's file directory.
public enum PostgresMarker {
    /// The file's name inside the data directory.
    public static let fileName = "postgres-store"

    /// The URL the marker in `directory` names; nil when there is none (or it cannot be read).
    public static func url(in directory: String) -> String? {
        guard let data = FileManager.default.contents(atPath: directory + "/" + fileName) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "postgres://…" : text
    }

    /// Writes the marker naming `redactedURL` (a URL without its password) into `directory`,
    /// unless it already says so: a temporary file renamed over the old one, mode 0600.
    /// - Throws: a file error when the directory cannot be written.
    public static func write(_ redactedURL: String, in directory: String) throws {
        guard url(in: directory) != redactedURL else { return }
        let path = directory + "/" + fileName
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data((redactedURL + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        guard rename(temporary, path) == 0 else {
            let problem = String(cString: strerror(errno))
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: problem])
        }
    }
}
