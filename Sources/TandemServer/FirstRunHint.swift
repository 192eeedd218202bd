/// What `tandem serve` prints at start while its data directory has no container yet
/// (decision F8): the commands that make one, a user and a token, and where the console is.
/// Printed once per start, after the console's one-time setup line.
enum FirstRunHint {
    /// The lines, `--data` spelled out unless it is the default `./tandem-data`.
    static func text(dataDirectory: String, base: String) -> String {
        let data = ["./tandem-data", "tandem-data"].contains(dataDirectory) ? "" : " --data \(dataDirectory)"
        return """
            no containers yet: this data directory is empty. Next, in another terminal:
              tandem container create iCloud.com.example.notes\(data)
              tandem user add --email you@example.com --name "Your Name"\(data)
              tandem token create --user you@example.com\(data)   # prints a token for Authorization: Bearer …
            or open the console at \(base)/console/ (README.md "Try it with curl" walks through the API)
            """
    }
}
