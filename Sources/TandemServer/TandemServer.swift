import Dispatch
import Foundation
import TandemCore
public import TandemHTTP
public import TandemStore

/// Settings of `tandem serve`.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port (tests); `port` on the server tells which.
    public var port: Int
    /// Holds `assets/`, `avatars/` and `secret.key` (and `tandem.sqlite` for the SQLite store,
    /// which the `tandem` command opens there; the server is given its store, decisions P1).
    public var dataDirectory: String
    /// Request handler threads. Writes wait for their group commit on these threads, so more
    /// threads mean larger commit batches; on two cores 32 served both lookups and creates best
    /// (measured with tandem-bench: 64 threads cost ~15% more CPU per lookup).
    public var workerCount: Int
    /// Of those, how many run at once before queued requests wait for one (a worker blocked
    /// for more than a millisecond, in a write's group commit or a PostgreSQL round trip, does
    /// not count; decisions E28). The number of cores by default; 0: no limit.
    public var runningWorkerLimit = ProcessInfo.processInfo.activeProcessorCount
    /// One line per request on standard error.
    public var logRequests: Bool
    /// The URL clients reach the server at (e.g. `https://tandem.example.com`), used in asset
    /// download URLs and sign-in redirects; nil builds them from each request's Host header.
    public var publicURL: String?
    /// Participants per share, the owner included (decisions D8).
    public var participantLimit = Limits.participantsPerShare
    /// How long change history (tombstones, share exits, zone deletions in database feeds) is
    /// kept, in seconds (decisions D9: 30 days); older sync tokens get `CHANGE_TOKEN_EXPIRED`.
    public var changeRetentionSeconds: Double = 30 * 86_400
    /// How often expired history is purged, in seconds.
    public var purgeIntervalSeconds: Double = 300
    /// Messages a stream WebSocket may have waiting to be sent before a non-droppable one closes
    /// it as a slow consumer.
    public var streamQueueMessages = 4096
    /// Participants per group session, the local one included (decisions D33).
    public var sessionParticipantLimit = Limits.participantsPerSession
    /// Messenger messages per second per participant, and the burst allowed (decisions G6).
    public var sessionMessageRate = 1000.0
    public var sessionMessageBurst = 2000.0
    /// App IDs (`TEAMID.bundle.id`) listed in `/.well-known/apple-app-site-association` for `/share/*`.
    public var appIDs: [String] = []
    /// Seconds a fetched apple-app-site-association file is used before it is fetched again.
    public var linksTTL = 86_400
    /// Fetch association files from `ORIGIN/DOMAIN/.well-known/…` instead of
    /// `https://DOMAIN/.well-known/…` (tests against a local server, internal mirrors).
    public var linksFetchOrigin: String?
    /// Address blocks that webhook deliveries and association-file fetches may reach although
    /// the outbound-address rule refuses them (loopback, private, link-local, ...), over plain
    /// `http` too (`--webhook-allow CIDR`, repeatable; tests open `127.0.0.0/8`). Empty: only
    /// `https` to public addresses.
    public var webhookAllow: [AddressRange] = []
    /// The load balancers in front of this server (`--trusted-proxy CIDR`, repeatable): from
    /// these peers, `X-Forwarded-For` names the client whose address per-address limits count
    /// (failed sign-ins, sign-ups, bodies being received; `TrustedProxies` gives the rule).
    /// Empty: the TCP peer is the client, and the header is ignored.
    public var trustedProxies: [AddressRange] = []
    /// Sign-in: password hashing, session limits, rate limits (issue 16).
    public var accounts = AccountSettings()
    /// The `--store` value an admin command needs to open this server's store, as the first-run
    /// hint prints it: a PostgreSQL URL without its password, or a SQLite directory other than
    /// the data directory; nil when the store is SQLite in the data directory (decisions P57).
    public var storeArgument: StoreArgument?

    public init(host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = "./tandem-data",
                workerCount: Int = 32, logRequests: Bool = true) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.workerCount = workerCount
        self.logRequests = logRequests
    }
}

/// One Tandem server: the store, the services and the HTTP server in front of them.
///
/// `start()` binds and serves; `shutdown()` stops accepting requests, lets in-flight ones finish
/// and be written, then closes the database (checkpointing the WAL).
public final class TandemServer: Sendable {
    public let configuration: ServerConfiguration
    public let store: any Store
    let http: HTTPServer
    let log: RequestLog
    let purger: ChangePurger
    let hub: ChangeHub
    /// The hubs' fan-out: in-process, or between nodes with a transport (decisions N1).
    let bus: EventBus
    let webhooks: WebhookSender
    let webCourier: WebCourier
    /// Told, as the server stops, to hand its group sessions to the other nodes (N65).
    private let sessions: SessionHub
    /// Group session journal files: no session survives a restart (decisions G2), so files left
    /// by sessions that were live when the last process stopped are deleted at start (D37); not
    /// with a bus, where `journal/` is shared and other nodes' live sessions use it (N36).
    let journal: AssetFiles
    /// The console's first-run setup code, printed at start when there is no administrator.
    let consoleSetup: ConsoleSetup
    private let stopped = Locked<Bool>(false)
    /// A signal came while `start()` ran (`runUntilSignalled`).
    private let stopAsked = Locked<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Builds the services over `store`, which the server owns from now on (`shutdown()` closes
    /// it). The store is opened by the caller (the `tandem` command: decisions P1), so the server
    /// names no database.
    /// `bus`: what carries the hubs' events to the other nodes (`tandem serve --bus`, decisions
    /// N1); nil for one node (in-process). The server owns it from now on (`shutdown()` closes it).
    /// - Throws: a file error when the data directory (secret key, journal) cannot be used.
    public init(configuration: ServerConfiguration, store: any Store, bus transport: (any BusTransport)? = nil) throws {
        self.configuration = configuration
        self.store = store
        let secret = try ServerSecret.load(directory: configuration.dataDirectory)
        log = RequestLog(enabled: configuration.logRequests)
        bus = EventBus(transport: transport, log: log, secret: secret)
        hub = ChangeHub(store: store, bus: bus, log: log)
        let journal = try AssetFiles.journal(dataDirectory: configuration.dataDirectory)
        self.journal = journal
        let services = Services(store: store, secret: secret, publicURL: configuration.publicURL,
                                participantLimit: configuration.participantLimit, appIDs: configuration.appIDs, hub: hub, bus: bus, log: log,
                                links: LinkService(store: store, ttlSeconds: configuration.linksTTL, fetchOrigin: configuration.linksFetchOrigin,
                                                  outboundAllow: configuration.webhookAllow),
                                journal: journal,
                                sessionSettings: SessionHub.Settings(participantLimit: configuration.sessionParticipantLimit,
                                                                     messageRate: configuration.sessionMessageRate,
                                                                     messageBurst: configuration.sessionMessageBurst),
                                outbound: OutboundRule(allowed: configuration.webhookAllow),
                                accountSettings: configuration.accounts)
        webhooks = services.webhooks
        consoleSetup = services.consoleSetup
        webCourier = services.webCourier
        sessions = services.sessions
        let counter = ConnectionCounter()
        let router = APIRouter(services: services, metrics: Metrics(), log: log, connectionCount: { counter.value() },
                               droppedMessages: { counter.dropped() }, bodies: { counter.bodies() })
        var httpConfiguration = HTTPServerConfiguration(host: configuration.host, port: configuration.port,
                                                        workerCount: configuration.workerCount)
        httpConfiguration.runningWorkerLimit = configuration.runningWorkerLimit
        httpConfiguration.trustedProxies = TrustedProxies(configuration.trustedProxies)
        httpConfiguration.webSocket.sendQueueMessages = configuration.streamQueueMessages
        // Spooled uploads land beside the asset files, so storing one is a rename.
        httpConfiguration.spoolDirectory = store.assets.temporaryDirectory
        http = HTTPServer(configuration: httpConfiguration, responder: router,
                          webSocketResponder: StreamResponder(services: services, registry: services.streams))
        purger = ChangePurger(store: store, retentionSeconds: configuration.changeRetentionSeconds,
                              interval: configuration.purgeIntervalSeconds, log: log)
        let server = http
        counter.server.withLock { $0 = server }
    }

    /// Binds the port and starts serving.
    /// - Throws: `HTTPServerError` when the address cannot be bound.
    public func start() throws {
        try bus.start()
        sessions.announce()
        sessions.awaitOtherNodes(seconds: 1.5)
        hub.start()
        webhooks.start()
        // SIGINT or SIGTERM while waiting for the other nodes (runUntilSignalled): stop without
        // binding the port or saying "serving" (stop 44's review).
        guard !stopAsked.withLock({ $0 }) else { return }
        try http.start()
        if bus.isLocal { journal.removeAll() }   // after binding: a second process on the same data directory fails above
        purger.start()
        log.message("tandem serving on http://\(configuration.host):\(http.port) (data: \(configuration.dataDirectory), store: \(store.summary)\(bus.isLocal ? "" : ", bus: " + bus.summary))")
        let wildcard = ["0.0.0.0", "::", "[::]", ""].contains(configuration.host)
        let base = configuration.publicURL ?? "http://\(wildcard ? "127.0.0.1" : configuration.host):\(http.port)"
        if let code = try consoleSetup.open(store: store) {
            // Printed once, to the terminal only (decisions C2).
            log.message("no server administrator yet: create the first one at \(base)/console/setup?code=\(code) (or run: tandem admin add EMAIL)")
        }
        // After the setup line, which scripts and tests read right after "serving on" (F8).
        if try store.read({ try $0.containers().isEmpty }) {
            log.message(FirstRunHint.text(dataDirectory: configuration.dataDirectory, store: configuration.storeArgument, base: base))
        }
    }

    /// The bound port.
    public var port: Int { http.port }

    /// Stops serving: in-flight requests finish, then the database closes. Idempotent; every
    /// caller returns only once the shutdown is complete.
    public func shutdown() {
        let first = stopped.withLock { wasStopped -> Bool in
            defer { wasStopped = true }
            return !wasStopped
        }
        guard first else {
            finished.wait()
            finished.signal()
            return
        }
        // Parked long polls end first: http.shutdown() waits for in-flight requests.
        webCourier.close()
        sessions.leave()
        http.shutdown()
        purger.stop()
        hub.stop()
        bus.stop()
        webhooks.stop()
        store.close()
        log.message("tandem stopped")
        log.stop()
        finished.signal()
    }

    public func waitUntilStopped() { http.waitUntilStopped() }

    /// Serves until SIGINT or SIGTERM, then shuts down cleanly.
    /// - Throws: `HTTPServerError` when the address cannot be bound, and, after the clean
    ///   shutdown, when the HTTP server stopped on its own (`HTTPServer.failure`: the listening
    ///   socket was lost, or libwebsockets failed), so that `tandem serve` exits non-zero and a
    ///   supervisor restarts it.
    ///
    /// - Parameter watch: called once the server serves, with a function that stops it; e.g.
    ///   `--stop-on-stdin-eof`'s reader of standard input. Called only after `start()` returned,
    ///   so a stop it asks for at once (standard input already closed) ends a server that served,
    ///   instead of refusing the start.
    public func runUntilSignalled(watch: (@Sendable (_ stop: @escaping @Sendable () -> Void) -> Void)? = nil) throws {
        // The sources are registered before start() prints "serving on": a SIGTERM sent as soon as
        // that line is read (as the tests' servers are stopped) otherwise fell between SIG_IGN and
        // the source's asynchronous registration, was lost, and the process never exited
        // (decisions P51). A signal during start() waits for it to end before shutting down; one
        // before it binds the port (a node waiting to hear the others, N84) keeps it from binding.
        let started = DispatchSemaphore(value: 0)
        let signals = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let registered = DispatchSemaphore(value: 0)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setRegistrationHandler { registered.signal() }
            source.setEventHandler { [self] in
                stopAsked.withLock { $0 = true }
                started.wait()
                started.signal()
                shutdown()
            }
            source.resume()
            registered.wait()
            return source
        }
        do { try start() } catch {
            started.signal()
            throw error
        }
        started.signal()
        watch?({ [self] in shutdown() })
        http.waitUntilStopped()
        shutdown()
        signals.forEach { $0.cancel() }
        if let failure = http.failure { throw failure }
    }
}

/// Lets /metrics read the open-connection count of the HTTP server built after the router.
final class ConnectionCounter: Sendable {
    let server = Locked<HTTPServer?>(nil)

    func value() -> Int { server.withLock { $0?.openConnections ?? 0 } }
    func dropped() -> Int { server.withLock { $0?.droppedWebSocketMessages ?? 0 } }
    func bodies() -> HTTPBodyFigures { server.withLock { $0?.bodies ?? HTTPBodyFigures() } }
}
