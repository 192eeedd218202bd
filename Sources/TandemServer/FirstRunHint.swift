import Foundation

/// What `tandem serve` prints at start while its data directory has no container yet
/// (decision F8): the commands that make one, a user and a token, and where the console is.
/// Printed once per start, after the console's one-time setup line.
enum FirstRunHint {
    /// The lines, `--data` spelled out unless it is the default `./tandem-data`, quoted for the
    /// shell when it needs it (a folder with a space was printed bare and split in two; F46),
    /// and `--store` when the store is not SQLite in the data directory: without it the
    /// commands would make a SQLite store the server never reads (P57). A PostgreSQL URL is
    /// printed without its password, with a line saying where the commands find it.
    static func text(dataDirectory: String, store: StoreArgument? = nil, base: String) -> String {
        var data = ["./tandem-data", "tandem-data"].contains(dataDirectory) ? "" : " --data \(shellWord(dataDirectory))"
        var password = ""
        if let store {
            data += " --store \(store.shellWord)"
            if case .postgres = store {
                password = "\n  (the URL without its password: the commands read it from ~/.pgpass or PGPASSWORD)"
            }
        }
        let what = store == nil ? "this data directory is empty" : "the store is empty"
        return """
            no containers yet: \(what). Next, in another terminal:
              tandem container create iCloud.com.example.notes\(data)
              tandem user add --email you@example.com --name "Your Name"\(data)
              tandem token create --user you@example.com\(data)   # prints a token for Authorization: Bearer …\(password)
            or open the console at \(base)/console/ (README.md "Try it with curl" walks through the API)
            """
    }

    /// `text` as one shell word: as it is when it holds only characters no shell treats
    /// specially, else in single quotes (a `'` inside as `'\''`).
    private static let shellPlain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,=")

    static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy(shellPlain.contains)
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
