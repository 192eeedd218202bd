/// The options each command takes, so that a mistyped one (`--emial`, `--bus-pasword`) is
/// refused, naming it, before the command does anything, instead of being ignored (review 47:
/// every command but `migrate` ran on without it and exited 0).
///
/// By the command's first word: a subcommand may take fewer than its command's set, and then
/// ignores the rest, as before. `serve` takes its `--config` keys (``ServeCommand/keys``).
enum CommandOptions {
    /// Where the store is: every command that opens one.
    static let store: Set<String> = ["data", "store"]

    static let byCommand: [String: Set<String>] = [
        "serve": Set(ServeCommand.keys.keys).union(["config"]),
        "admin": store.union(["password-stdin", "password-hash"]),
        "token": store.union(["api", "container", "origin", "sign-in-callback", "user", "admin", "expires", "session", "all"]),
        "user": store.union(["email", "name", "phone", "discoverable", "container", "environment", "clear", "replace", "yes"]),
        "key": store.union(["container", "public-key", "user"]),
        "container": store.union(["permission", "access"]),
        "schema": store.union(["container", "environment", "force"]),
        "links": store.union(["app", "container", "links-ttl", "links-fetch-origin", "webhook-allow"]),
        "app": store.union(["container", "domains", "add", "remove"]),
        // `--data` and `--store` are every command's, even where they mean nothing (as for `migrate`).
        "listen": store.union(["container", "count", "device-id", "environment", "server", "token"]),
        "migrate": MigrateCommand.options,
        "store": store,
    ]

    /// Options that may be given more than once (each value counts).
    static let repeatable: Set<String> = Set(ServeCommand.keys.filter { $0.value == .repeated }.keys).union(["origin"])

    /// Refuses an option the command does not take (an unknown command is left to the
    /// dispatch), then one given without its value, then one given twice that counts once.
    static func refuseUnknown(_ options: Options) throws {
        if let command = options.words.first, let allowed = byCommand[command] {
            try options.refuseUnknown(allowed, command: command)
        }
        try options.requireValues()
        try options.refuseRepeated(except: repeatable)
        try refuseOtherTokenKinds(options)
    }

    /// `token create` makes three kinds of token, each with options of its own: one given to
    /// another kind was ignored (a user's or an API token given `--expires 1h` never expired:
    /// reviews 50, 51).
    static func refuseOtherTokenKinds(_ options: Options) throws {
        guard options.words.prefix(2) == ["token", "create"] else { return }
        let kind = options.flag("admin") ? "an admin token" : options.flag("api") ? "an API token" : "a user's token"
        let taken: Set<String> = options.flag("admin") ? ["expires"]
            : options.flag("api") ? ["container", "origin", "sign-in-callback", "user"]  // --user: its own message, later
            : ["user"]
        if let name = ["container", "expires", "origin", "sign-in-callback", "user"].first(where: { options.value($0) != nil && !taken.contains($0) }) {
            throw UsageError("--\(name) is not for \(kind) (--expires is --admin's; --container, --origin and --sign-in-callback are "
                             + "--api's; --user is a user's token's, which lasts as serve's --session-lifetime and --session-idle say)")
        }
    }
}
