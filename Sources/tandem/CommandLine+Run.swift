import Foundation
import TandemCore
import TandemHTTP
import TandemServer
import TandemStore
import TandemStorePostgres

/// `tandem` subcommands. Every command takes `--data DIR` (default ./tandem-data) and, where it
/// opens the store, `--store postgres://…|DIR` (default: the `--data` directory; P36).
extension CommandLine {
    static let usage = """
        usage:
          tandem serve [--host 127.0.0.1] [--port 8080] [--data DIR] [--synchronous full|normal] [--workers N] [--running-workers N] [--quiet]
                       [--public-url https://host]   (base of asset, share and sign-in URLs; default: from each request's Host;
                                                  emailed sign-up and reset links need it unless reached at localhost)
                       [--stop-on-stdin-eof]   (for supervisors and tests: stop cleanly when standard input closes)
                       [--participant-limit 100]   (participants per share, the owner included)
                       [--change-retention SECONDS]   (change history kept for sync tokens; default 30 days)
                       [--session-participant-limit 32] [--session-rate 1000] [--session-burst 2000]   (group sessions, D33, G6)
                       [--stream-queue 4096]   (messages a stream WebSocket may have queued before it is closed as too slow)
                       [--app-ids TEAMID.bundle.id,...]   (apps that open /share/* links: the server's apple-app-site-association)
                       [--links-ttl 86400]   (seconds a fetched apple-app-site-association file is used)
                       [--links-fetch-origin http://127.0.0.1:8000]   (fetch ORIGIN/DOMAIN/.well-known/... instead of https://DOMAIN/...)
                       [--webhook-allow CIDR]...   (let webhooks and association fetches reach this block, over http too; default: https to public addresses only)
                       [--trusted-proxy CIDR]...   (load balancers in this block name the client in X-Forwarded-For, for per-address limits; default: none)
                       [--max-database-mib N]   (cap tandem.sqlite at N MiB: past it writes are refused as on a full disk, reads go on)
                       [--store postgres://USER@HOST:PORT/DB | DIR]   (the store: a PostgreSQL database, or a directory for tandem.sqlite;
                                  default: the --data directory. With PostgreSQL, --data still holds assets, avatars, secret.key, journal)
                       [--pool-size 16]   (PostgreSQL: most connections the server opens)
                       [--bus nats://HOST:4222[,nats://…]]   (several nodes: the NATS cluster that carries live events between them;
                                  tls://HOST:4222 for TLS; keep its password in --config)
                       [--bus-ca FILE.pem] [--bus-credentials FILE.creds]   (the bus's TLS authorities; its NATS user credentials)
        \(AccountCommand.serveUsage)
        \(ServeCommand.usage)
          (every command below that takes --data DIR also takes --store postgres://…|DIR: the store it opens;
           on the --data of a server on PostgreSQL, which holds postgres-store, it is refused without --store)
          tandem container create ID [--data DIR]
          tandem container list [--data DIR]
          tandem container sharing-options ID [--permission any|readOnly|readWrite] [--access any|anyoneWithLink|specifiedRecipientsOnly]
                                  [--data DIR]   (what shares in the container may grant; no option: show them)
          tandem user add --email EMAIL [--name "Given Family"] [--phone +15550100] [--discoverable] [--data DIR]
          tandem token create --user EMAIL_OR_USER_RECORD_NAME [--data DIR]
          tandem token create --api --container ID [--origin https://app.example,...] [--sign-in-callback message|URL] [--data DIR]
        \(AccountCommand.usage)
        \(AdminCommand.usage)
        \(KeyCommand.usage)
          tandem user roles --email EMAIL --container ID --environment development|production [ROLE... | --clear] [--replace] [--data DIR]   (no ROLE: show them)
          tandem schema validate FILE.ckdb
          tandem schema diff OLD.ckdb NEW.ckdb
          tandem schema import FILE.ckdb --container ID --environment development|production [--force] [--data DIR]
          tandem schema export --container ID --environment development|production [--data DIR]
          tandem schema promote --container ID [--force] [--data DIR]   (development → production)
          tandem links check FILE --app APPIDPREFIX.bundle.id URL...   (an apple-app-site-association file)
          tandem links lint FILE
          tandem links upload DOMAIN FILE --container ID [--data DIR]
          tandem links refresh DOMAIN --container ID [--links-ttl 86400] [--links-fetch-origin URL] [--webhook-allow CIDR]... [--data DIR]
          tandem app add TEAMID.bundle.id --container ID [--domains applinks:example.com,applinks:*.example.com] [--data DIR]
          tandem app domains TEAMID.bundle.id --container ID [--add applinks:a.com,...] [--remove applinks:b.com,...] [--data DIR]
          tandem app list --container ID [--data DIR]
        \(ListenCommand.usage)
        \(MigrateCommand.usage)
        \(StoreCommand.usage)
        """

    /// Runs a command line; returns the process exit status.
    static func run(_ arguments: [String]) -> Int32 {
        // `tandem help`, `tandem --help`, `tandem serve -h`: the usage on standard output, success.
        // No arguments at all: the same (F4; it said "unknown command ''").
        if arguments.isEmpty || arguments.first == "help" || arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            return 0
        }
        var options: Options
        do {
            options = try Options(arguments)
        } catch {
            fail("\(error)\n(tandem --help lists every command and option)")
            return 64
        }
        let data = options.value("data") ?? "./tandem-data"
        do {
            try CommandOptions.refuseUnknown(options)
            let store = try StoreLocation.command(options, data: data)
            if let status = try AdminCommand.run(options, store: store) { return status }
            if let status = try AccountCommand.run(options, store: store) { return status }
            if let status = try KeyCommand.run(options, store: store) { return status }
            if let status = try MigrateCommand.run(options) { return status }
            if let status = try StoreCommand.run(options, store: store) { return status }
            switch (options.words.first, options.words.dropFirst().first, options.words.count) {
            case ("serve", nil, 1):
                // `--config FILE` holds the same settings as the flags; flags given here win.
                let merged = try ServeCommand.options(options)
                let directory = merged.value("data") ?? "./tandem-data"
                var configuration = try ServeCommand.configuration(merged, data: directory)
                let bus = try ServeCommand.bus(merged)
                let location = try ServeCommand.storeLocation(merged, data: directory)
                configuration.storeArgument = location.argument(data: directory)
                // Held while serving, so `tandem migrate` refuses to copy from or into it (review 47),
                // and a second server refuses it unless both are nodes of one cluster (review 58).
                for held in location.directories(data: directory) { try DataDirectoryLock.holdWhileServing(held, shared: bus != nil) }
                let store = try location.open()
                let server: TandemServer
                do {
                    // Admin commands on this directory without --store are refused from now on (P57).
                    if case .postgres(let url) = configuration.storeArgument { try PostgresMarker.write(url, in: directory) }
                    server = try TandemServer(configuration: configuration, store: store, bus: bus)
                } catch {
                    store.close()
                    throw error
                }
                // Watched once serving: standard input already closed stops a server that started (E30).
                try server.runUntilSignalled(watch: merged.flag("stop-on-stdin-eof") ? StdinWatch.stopWhenStandardInputCloses : nil)
            case ("listen", nil, 1):
                return try ListenCommand.run(options)
            case ("container", "list", 2):
                // One container ID a line, oldest first is not promised: by ID.
                for summary in try withStore(store, existing: true, { try $0.read { try $0.containers() } }) { print(summary.id) }
            case ("container", "create", 3):
                let id = options.words[2]
                let created = try withStore(store) { try Admin.createContainer(id, store: $0) }
                print(created ? "created container \(id)" : "container \(id) already exists")
            case ("container", "sharing-options", 3):
                let id = options.words[2]
                let permission = options.value("permission"), access = options.value("access")
                let current = try withStore(store, existing: true) { store in
                    if permission == nil && access == nil { return try SharingOptionsAdmin.options(container: id, store: store) }
                    return try SharingOptionsAdmin.set(container: id, permission: permission, access: access, store: store)
                }
                print("\(id): \(SharingOptionsAdmin.line(current))")
            case ("user", "add", 2):
                guard let email = options.value("email") else { throw UsageError("user add needs --email") }
                let user = try withStore(store) {
                    try Admin.addUser(email: email, name: options.value("name"), phone: options.value("phone"),
                                      discoverable: options.flag("discoverable"), store: $0)
                }
                print(user.recordName)
            case ("user", "roles", 2...):
                guard let email = options.value("email"), let container = options.value("container") else {
                    throw UsageError("user roles needs --email EMAIL --container ID --environment ENV")
                }
                let environment = try SchemaCommand.environment(options)
                var roles = Array(options.words.dropFirst(2))
                if roles.isEmpty && !options.flag("clear") {
                    // No roles named: show the current ones (clearing takes --clear).
                    roles = try withStore(store) { try Admin.roles(of: email, container: container, environment: environment, store: $0) }
                } else {
                    // What is printed is what applies: the roles read back after the write.
                    roles = try withStore(store) {
                        try Admin.assignRoles(roles, to: email, container: container, environment: environment,
                                              replacing: options.flag("replace"), store: $0)
                    }
                }
                print("roles of \(email) in \(container) \(environment.rawValue): \(roles.isEmpty ? "none" : roles.joined(separator: ", "))")
            case ("token", "create", 2):
                if options.flag("api") {
                    guard let container = options.value("container") else { throw UsageError("token create --api needs --container ID") }
                    guard options.value("user") == nil else { throw UsageError("an API token belongs to a container, not a user: drop --user") }
                    let origins = options.all("origin").flatMap { value in
                        value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                    }
                    // Checked before the data directory is opened: a refused value writes nothing (A42).
                    do {
                        _ = try AccountAdmin.checkSignInTargets(origins: origins, callback: options.value("sign-in-callback"))
                    } catch let error as CloudKitError {
                        throw UsageError("--origin / --sign-in-callback: " + error.reason)
                    }
                    print(try withStore(store) {
                        try AccountAdmin.createAPIToken(container: container, origins: origins, callback: options.value("sign-in-callback"), store: $0)
                    })
                } else {
                    guard let user = options.value("user") else { throw UsageError("token create needs --user EMAIL_OR_USER_RECORD_NAME") }
                    print(try withStore(store) { try Admin.createUserToken(for: user, store: $0) })
                }
            case ("schema", _, _):
                return try SchemaCommand.run(Array(options.words.dropFirst()), options: options, store: store)
            case ("links", "check", 3...):
                guard let app = options.value("app") else { throw UsageError("links check needs --app APPIDPREFIX.bundle.id") }
                return try LinksCommand.check(path: options.words[2], appID: app, urls: Array(options.words.dropFirst(3)))
            case ("links", "lint", 3):
                return try LinksCommand.lint(path: options.words[2])
            case ("links", "upload", 4):
                guard let container = options.value("container") else { throw UsageError("links upload needs --container ID") }
                return try LinksCommand.upload(domain: options.words[2], path: options.words[3], container: container, store: store)
            case ("links", "refresh", 3):
                guard let container = options.value("container") else { throw UsageError("links refresh needs --container ID") }
                let ttl = try options.value("links-ttl").map { value in
                    guard let n = Int(value), n >= 0 else { throw UsageError("--links-ttl must be a number of seconds") }
                    return n
                } ?? 86_400
                return try LinksCommand.refresh(domain: options.words[2], container: container, ttl: ttl,
                                                fetchOrigin: try fetchOrigin(options), outboundAllow: try webhookAllow(options), store: store)
            case ("app", "add", 3), ("app", "domains", 3), ("app", "list", 2):
                return try AppCommand.run(Array(options.words.dropFirst()), options: options, store: store)
            default:
                throw UsageError("unknown command '\(options.words.joined(separator: " "))'", showsUsage: true)
            }
            return 0
        } catch let error as UsageError {
            // The whole usage (90 lines) only when the command itself is unknown: after a bad value
            // it pushed the one line that says what is wrong off the screen (stop 40's review).
            fail(error.showsUsage ? "\(error.message)\n\(usage)" : "\(error.message)\n(tandem --help lists every command and option)")
            return 64
        } catch let error as CloudKitError {
            fail("error: \(error.reason)")
            return 1
        } catch let error as StoreError where error.kind == .unavailable {
            // libpq's messages run over several lines ("connection to server … failed: …\n\tIs
            // the server running …"): one line, without the URL, which may hold a password.
            fail("error: the store cannot be reached: " + error.reason.split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " "))
            return 1
        } catch {
            fail("error: \(error)")
            return 1
        }
    }

    /// Opens the store, runs `body`, closes the store. A running server's writer may hold the
    /// write lock for a moment at a time (or win a serialization race, on PostgreSQL); a
    /// retryable failure is retried for up to 30 seconds.
    /// `existing`: for listing commands, which must find a SQLite data directory rather than make
    /// one (a mistyped `--data` listed nothing, exit 0, and left an empty store behind; F42). A
    /// mistyped PostgreSQL database cannot be connected to, so nothing is made there either.
    /// - Throws: `NOT_FOUND` "no Tandem data in DIR" when `existing` and DIR has no database;
    ///   ``StoreError`` `unavailable` when the database cannot be reached.
    static func withStore<T>(_ location: StoreLocation, existing: Bool = false, _ body: (any Store) throws -> T) throws -> T {
        try location.refuseAPostgresDataDirectory()
        if existing, let file = location.sqliteFile, !FileManager.default.fileExists(atPath: file) {
            let directory = String(file.dropLast("/tandem.sqlite".count))
            throw CloudKitError(.notFound, "no Tandem data in \(directory) (tandem serve or tandem container create makes it there; --data DIR names another directory)")
        }
        // A listing command on PostgreSQL leaves no data directory behind where there was none
        // (the store makes its asset folders when it opens).
        if existing, case .postgres(_, let options) = location, !FileManager.default.fileExists(atPath: options.directory) {
            defer { removeEmptyFolders(options.directory) }
            return try withStore(location, body)
        }
        let deadline = Date().addingTimeInterval(30)
        while true {
            do {
                let store = try location.open()
                defer { store.close() }
                return try body(store)
            } catch let error as StoreError where error.kind == .retryable && Date() < deadline {
                usleep(useconds_t.random(in: 50_000...250_000))
            }
        }
    }

    /// Removes `directory` when it holds folders only (no file anywhere under it).
    private static func removeEmptyFolders(_ directory: String) {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return }
        for case let relative as String in walker {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory + "/" + relative, isDirectory: &isDirectory) || !isDirectory.boolValue { return }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Every `--webhook-allow CIDR`, checked.
    static func webhookAllow(_ options: Options) throws -> [AddressRange] {
        try addressBlocks(options, "webhook-allow")
    }

    /// Every `--KEY CIDR` (a repeatable option), checked.
    static func addressBlocks(_ options: Options, _ key: String) throws -> [AddressRange] {
        try options.all(key).map { text in
            guard let range = AddressRange(text) else {
                throw UsageError("--\(key) takes an address block such as 127.0.0.0/8 or ::1/128 (host bits zero), not '\(text)'")
            }
            return range
        }
    }

    /// `--links-fetch-origin`, checked.
    static func fetchOrigin(_ options: Options) throws -> String? {
        guard let origin = options.value("links-fetch-origin") else { return nil }
        guard origin.hasPrefix("http://") || origin.hasPrefix("https://") else { throw UsageError("--links-fetch-origin must start with http:// or https://") }
        return String(origin.reversed().drop { $0 == "/" }.reversed())
    }

    static func fail(_ message: String) {
        // The throwing write: the old `write(_:)` traps (SIGILL) when standard error cannot be
        // written (closed, or `2>/dev/full`), which turned every error into a crash.
        try? FileHandle.standardError.write(contentsOf: Data((message + "\n").utf8))
    }
}

struct UsageError: Error, CustomStringConvertible {
    var message: String
    /// Print the whole usage after the message (an unknown command); otherwise a pointer to `--help`.
    var showsUsage = false
    init(_ message: String, showsUsage: Bool = false) {
        self.message = message
        self.showsUsage = showsUsage
    }
    var description: String { message }
}

/// Words and `--name value` / `--flag` options.
struct Options {
    static let flags: Set<String> = ["api", "quiet", "stop-on-stdin-eof", "discoverable", "clear", "admin", "force", "replace", "all", "yes", "password-stdin"]
    var words: [String] = []
    var values: [String: String] = [:]
    /// Every value given for each option, in order (`value(_:)` is the last one).
    var repeated: [String: [String]] = [:]
    /// The first option given without the value it needs (``requireValues()`` says so).
    var missingValue: String?

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    let key = String(name[..<equals]), value = String(name[name.index(after: equals)...])
                    // `--yes=no` was a yes (review 49): a switch takes true or false, or nothing.
                    if Self.flags.contains(key) && value != "true" && value != "false" {
                        throw UsageError("--\(key) is a switch: give it alone (or =true / =false), not '=\(value)'")
                    }
                    values[key] = value
                    repeated[key, default: []].append(value)
                    name = ""
                } else if Self.flags.contains(name) {
                    values[name] = "true"
                    repeated[name, default: []].append("true")
                } else {
                    guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
                        // Said after the command has checked its options: a mistyped switch
                        // (`--froce`) is an unknown option, not one missing its value.
                        missingValue = missingValue ?? name
                        values[name] = ""
                        repeated[name, default: []].append("")
                        index += 1
                        continue
                    }
                    values[name] = arguments[index + 1]
                    repeated[name, default: []].append(arguments[index + 1])
                    index += 1
                }
            } else {
                words.append(argument)
            }
            index += 1
        }
    }

    /// No words and no options.
    init() {}

    /// Refuses an option `command` does not take, naming it, before the command does anything
    /// (a mistyped `--forse` ran a whole migration and exited 0: stop 42's review).
    func refuseUnknown(_ allowed: Set<String>, command: String) throws {
        if let unknown = values.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw UsageError("\(command) takes no --\(unknown) (it takes \(allowed.sorted().map { "--" + $0 }.joined(separator: ", ")))")
        }
    }

    /// Refuses an option given without its value.
    func requireValues() throws {
        if let name = missingValue { throw UsageError("--\(name) needs a value") }
    }

    /// Refuses an option given more than once, unless it is one of `repeatable`: the last one
    /// was taken silently (`--bus` twice, meant as two NATS servers: stop 40's review; `--from`
    /// twice: review 49).
    func refuseRepeated(except repeatable: Set<String>) throws {
        if let name = repeated.keys.sorted().first(where: { !repeatable.contains($0) && repeated[$0]!.count > 1 }) {
            let hint = name == "bus" ? " (several NATS servers go in one --bus, comma-separated: nats://a:4222,nats://b:4222)" : ""
            throw UsageError("--\(name) is given \(repeated[name]!.count) times; give it once\(hint)")
        }
    }

    func value(_ name: String) -> String? { values[name] }
    func all(_ name: String) -> [String] { repeated[name] ?? [] }
    /// Whether a switch is on: given as `--name` (or `--name=true`), not `--name=false`.
    func flag(_ name: String) -> Bool { values[name] != nil && values[name] != "false" }

    /// Adds a value of `name` (the last one is `value(_:)`; all of them are `all(_:)`).
    mutating func set(_ name: String, _ value: String) {
        values[name] = value
        repeated[name, default: []].append(value)
    }

    /// Only the option `name`, without words.
    func only(_ name: String) -> Options {
        var options = Options()
        options.values[name] = values[name]
        options.repeated[name] = repeated[name]
        return options
    }

    /// These options with `other`'s words and every option `other` gives in place of this one's
    /// (a repeatable option's whole list is replaced).
    func overridden(by other: Options) -> Options {
        var merged = self
        merged.words = other.words
        for (name, value) in other.values {
            merged.values[name] = value
            merged.repeated[name] = other.repeated[name]
        }
        return merged
    }
}
