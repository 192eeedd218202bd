import Foundation
import TandemCore
import TandemNATS
import TandemServer
import TandemSQLite
import TandemStorePostgres
import TandemStoreSQLite

/// `tandem serve`: its settings from flags and from an optional JSON file (`--config FILE`).
///
/// The file is one JSON object whose keys are the flags' names without `--` and whose values are
/// what the flag would take: a string or a number for a setting (`"port": 8080`), a string for
/// one that names a place (`"smtp-url": "smtp://mail:587"`, `"store"`, `"data"`, `"host"`), `true`/`false` for a switch (`"quiet": true`), and an
/// array of strings for a repeatable flag (`"oidc-exchange": ["C,ISSUER,AUD"]`). It is read
/// with the project's JSON parser (Jansson: duplicate keys, comments and trailing commas are
/// refused). Flags on the command line win over the file; a repeatable flag given there
/// replaces the file's list. An unknown key, a value of the wrong JSON type, or a value the
/// flag would refuse stops `tandem serve` before anything starts, with a message naming the
/// file and the key, and exit status 64 (decisions A49).
enum ServeCommand {
    /// How a key of the file maps to a flag.
    enum Kind {
        /// `--name VALUE`: a string or a number in the file.
        case value
        /// `--name VALUE` that names a place or a name (a directory, a URL, a host): a string in
        /// the file; `{"store": 42}` made a directory named 42 (P60).
        case text
        /// `--name`: true or false in the file.
        case flag
        /// `--name VALUE`, repeatable: an array of strings (or one string) in the file.
        case repeated
    }

    /// Every setting of `tandem serve`, by flag name.
    static let keys: [String: Kind] = [
        "host": .text, "port": .value, "data": .text, "synchronous": .value, "workers": .value, "running-workers": .value, "quiet": .flag,
        "public-url": .text, "stop-on-stdin-eof": .flag, "participant-limit": .value, "change-retention": .value,
        "session-participant-limit": .value, "session-rate": .value, "session-burst": .value, "stream-queue": .value,
        "app-ids": .text, "links-ttl": .value, "links-fetch-origin": .text, "webhook-allow": .repeated, "trusted-proxy": .repeated,
        "max-database-mib": .value, "store": .text, "pool-size": .value, "bus": .text,
        "bus-ca": .text, "bus-credentials": .text,
        "password-hash": .value, "session-idle": .value, "session-lifetime": .value, "link-lifetime": .value, "sign-in-attempts": .value,
        "smtp-url": .text, "smtp-from": .text, "smtp-user": .text, "smtp-password": .text, "mail-templates": .text,
        "oidc-exchange": .repeated, "oidc-provider": .repeated, "passkey-rp-id": .text, "passkey-user-verification": .value,
    ]

    static let usage = """
                       [--config FILE.json]   (the settings above as one JSON object, keys without "--": {"port": 8080,
                                  "smtp-url": "smtp://mail:587", "quiet": true, "oidc-exchange": ["C,ISSUER,AUD"]};
                                  flags given here win; an unknown key or a bad value stops the server, naming the key)
        """

    /// The command line's options over those of `--config FILE` (when given).
    /// - Throws: `UsageError` naming the file (and the key) when it cannot be read, is not a JSON
    ///   object, or holds an unknown key or a value its flag would refuse.
    static func options(_ commandLine: Options) throws -> Options {
        // A setting given twice is refused before this (`CommandOptions`, stop 40's review).
        guard let path = commandLine.value("config") else { return commandLine }
        let file = try options(fromFile: path)
        // Each of the file's settings is checked alone, so that an error names its key.
        for key in file.values.keys.sorted() {
            do {
                _ = try configuration(file.only(key), data: "./tandem-data")
                _ = try sqliteOptions(file.only(key))
                _ = try poolSize(file.only(key))
                _ = try StoreLocation.Target(file.only(key).value("store"), data: "./tandem-data")
                _ = try bus(file.only(key))
            } catch let error as UsageError {
                throw UsageError("--config \(path): \"\(key)\": \(error.message)")
            }
        }
        return file.overridden(by: commandLine)
    }

    /// The settings in the JSON file at `path`, as options.
    static func options(fromFile path: String) throws -> Options {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("--config \(path): cannot read the file")
        }
        let root: JSONValue
        do { root = try JSONParser.parse([UInt8](data)) } catch {
            throw UsageError("--config \(path): not valid JSON: \(error)")
        }
        guard case .object(let object) = root else {
            throw UsageError("--config \(path): the file must hold one JSON object of settings, found \(root.kindName)")
        }
        var options = Options()
        for (key, value) in object.entries {
            guard let kind = keys[key] else {
                let hint = key.hasPrefix("--") ? " (write keys without the leading --)" : ""
                throw UsageError("--config \(path): unknown key \"\(key)\"\(hint); the keys are the flags of tandem serve: "
                    + keys.keys.sorted().joined(separator: ", "))
            }
            func wrong(_ expected: String) -> UsageError {
                UsageError("--config \(path): \"\(key)\" must be \(expected), not \(value.kindName)")
            }
            switch (kind, value) {
            case (.value, .string(let text)): options.set(key, text)
            case (.value, .int(let n)): options.set(key, String(n))
            case (.value, .double(let n)): options.set(key, String(n))
            case (.value, _): throw wrong("a string or a number")
            case (.text, .string(let text)): options.set(key, text)
            case (.text, _): throw wrong("a string")
            case (.flag, .bool(let on)): if on { options.set(key, "true") }
            case (.flag, _): throw wrong("true or false")
            case (.repeated, .string(let text)): options.set(key, text)
            case (.repeated, .array(let items)):
                for item in items {
                    guard case .string(let text) = item else { throw wrong("an array of strings") }
                    options.set(key, text)
                }
            case (.repeated, _): throw wrong("an array of strings")
            }
        }
        return options
    }

    /// Where the server's store is, from `options` (flags, or a file's settings): `--store` (a
    /// `postgres://` URL or a directory; the `--data` directory when absent) with its backend's
    /// settings: SQLite's `--synchronous` and `--max-database-mib` (P1), PostgreSQL's
    /// `--pool-size` (P37). A setting of the other backend is refused, not ignored.
    /// - Throws: `UsageError` for a value a flag does not take.
    static func storeLocation(_ options: Options, data: String) throws -> StoreLocation {
        let sqlite = try sqliteOptions(options)
        let poolSize = try poolSize(options)
        switch try StoreLocation.Target(options.value("store"), data: data) {
        case .directory(let path):
            guard poolSize == nil else { throw UsageError("--pool-size is for a PostgreSQL store (--store postgres://…)") }
            return .directory(path, sqlite)
        case .postgres(let url):
            for name in ["synchronous", "max-database-mib"] where options.value(name) != nil {
                throw UsageError("--\(name) is for a SQLite store; PostgreSQL's durability and size are the database's own settings")
            }
            return .postgres(url: url, PostgresStore.Options(directory: data, poolSize: poolSize ?? defaultPoolSize))
        }
    }

    /// `--bus nats://HOST:PORT[,…]`: the NATS cluster between nodes (decisions N9), with
    /// `--bus-ca FILE` (PEM authorities; TLS required) and `--bus-credentials FILE` (a NATS
    /// `.creds` file) (N29); nil (one node, in-process) when not given. Connects only when the
    /// server starts.
    /// - Throws: `UsageError` for a value that is not a list of `nats://`/`tls://` URLs, and for
    ///   `--bus-ca` or `--bus-credentials` without `--bus` (the node would run alone, N61).
    static func bus(_ options: Options) throws -> NATSBus? {
        let security = NATSConnection.Security(caFile: options.value("bus-ca"), credentialsFile: options.value("bus-credentials"))
        guard let value = options.value("bus") else {
            if let flag = ["bus-ca", "bus-credentials"].first(where: { options.value($0) != nil }) {
                throw UsageError("--\(flag) secures the bus: it needs --bus nats://HOST:PORT (without --bus the node runs alone)")
            }
            return nil
        }
        return try NATSBus(value, security: security)
    }

    /// PostgreSQL connections `tandem serve` opens at most when `--pool-size` is not given (P37).
    static let defaultPoolSize = 16

    /// The SQLite store's settings: `--synchronous` (FULL unless given) and `--max-database-mib`.
    /// - Throws: `UsageError` for a value a flag does not take.
    static func sqliteOptions(_ options: Options) throws -> SQLiteStore.Options {
        // Eight readers: request threads without a connection of their own share them.
        var store = SQLiteStore.Options(synchronous: .full, readerCount: 8)
        if let sync = options.value("synchronous") {
            guard let level = SQLiteSynchronous(rawValue: sync.uppercased()) else { throw UsageError("--synchronous must be full or normal") }
            store.synchronous = level
        }
        if let cap = options.value("max-database-mib") {
            guard let n = Int(cap), n >= 1, n <= Int.max >> 20 else { throw UsageError("--max-database-mib must be a positive number of MiB") }
            store.maximumDatabaseBytes = n << 20
        }
        return store
    }

    /// `--pool-size N`: 1–1000 PostgreSQL connections; nil when not given.
    /// - Throws: `UsageError` for anything else.
    static func poolSize(_ options: Options) throws -> Int? {
        guard let text = options.value("pool-size") else { return nil }
        guard let n = Int(text), (1...1000).contains(n) else { throw UsageError("--pool-size must be a number of connections, 1–1000") }
        return n
    }

    /// The server's configuration from `options` (flags, or a file's settings).
    /// - Throws: `UsageError` for a value a flag does not take.
    static func configuration(_ options: Options, data: String) throws -> ServerConfiguration {
        var configuration = ServerConfiguration(dataDirectory: data)
        configuration.host = options.value("host") ?? configuration.host
        if let port = options.value("port") {
            guard let n = Int(port), (0...65535).contains(n) else { throw UsageError("--port must be 0–65535") }
            configuration.port = n
        }
        if let workers = options.value("workers") {
            guard let n = Int(workers), n > 0 else { throw UsageError("--workers must be a positive number") }
            configuration.workerCount = n
        }
        if let limit = options.value("running-workers") {
            guard let n = Int(limit), n >= 0 else { throw UsageError("--running-workers must be 0 (no limit) or more") }
            configuration.runningWorkerLimit = n
        }
        configuration.logRequests = !options.flag("quiet")
        if let limit = options.value("participant-limit") {
            guard let n = Int(limit), n >= 2 else { throw UsageError("--participant-limit must be at least 2 (the owner and one more)") }
            configuration.participantLimit = n
        }
        if let retention = options.value("change-retention") {
            guard let seconds = Double(retention), seconds > 0 else { throw UsageError("--change-retention must be a positive number of seconds") }
            configuration.changeRetentionSeconds = seconds
            configuration.purgeIntervalSeconds = min(configuration.purgeIntervalSeconds, max(seconds / 4, 0.1))
        }
        if let queue = options.value("stream-queue") {
            guard let n = Int(queue), n >= 1 else { throw UsageError("--stream-queue must be a positive number of messages") }
            configuration.streamQueueMessages = n
        }
        if let limit = options.value("session-participant-limit") {
            guard let n = Int(limit), n >= 2 else { throw UsageError("--session-participant-limit must be at least 2") }
            configuration.sessionParticipantLimit = n
        }
        if let rate = options.value("session-rate") {
            guard let n = Double(rate), n > 0 else { throw UsageError("--session-rate must be a positive number of messages per second") }
            configuration.sessionMessageRate = n
            configuration.sessionMessageBurst = max(1, n * 2)
        }
        if let burst = options.value("session-burst") {
            guard let n = Double(burst), n >= 1 else { throw UsageError("--session-burst must be at least 1 message") }
            configuration.sessionMessageBurst = n
        }
        if let ids = options.value("app-ids") {
            configuration.appIDs = ids.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if let ttl = options.value("links-ttl") {
            guard let n = Int(ttl), n >= 0 else { throw UsageError("--links-ttl must be a number of seconds") }
            configuration.linksTTL = n
        }
        configuration.linksFetchOrigin = try CommandLine.fetchOrigin(options)
        configuration.webhookAllow = try CommandLine.webhookAllow(options)
        configuration.trustedProxies = try CommandLine.addressBlocks(options, "trusted-proxy")
        if let url = options.value("public-url") {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else { throw UsageError("--public-url must start with http:// or https://") }
            configuration.publicURL = String(url.reversed().drop { $0 == "/" }.reversed())
        }
        try AccountCommand.configure(&configuration.accounts, options)
        return configuration
    }
}
