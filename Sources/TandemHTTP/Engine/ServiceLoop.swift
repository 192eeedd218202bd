import Foundation
import Synchronization
import CWebSockets

/// One holder's reserved request bodies (service thread).
struct HolderShare {
    var spooledBodies = 0
    var bufferedBytes = 0
}

/// Owns the libwebsockets context and everything that happens on its single service thread.
///
/// lws owns every socket and calls `serviceCallback` on the service thread; all state marked
/// "service thread" below is touched only there, which is why the class can be
/// `@unchecked Sendable`. Other threads only use the thread-safe members: `completions`,
/// `counters`, `stopSignal`, `failure` and `requestShutdown()`.
final class ServiceLoop: @unchecked Sendable {
    /// The service thread's `threadDictionary` key for its loop (lws' log lines, which carry
    /// no context, find the loop of the thread they are raised on: `LWSLogging`).
    static let threadKey = "TandemHTTP.serviceLoop"
    /// Body bytes handed to lws in one write; also the most lws sends per `send()` call.
    static let writeChunkSize = 256 * 1024
    /// The most of a refused body read and dropped before closing; beyond it the connection
    /// is closed at once.
    static let discardAllowance = 4 * 1024 * 1024
    /// Seconds to wait for the first bytes of a refused body before closing anyway.
    static let lingerTimeout = 2
    /// Seconds a refused body may be read and dropped in all before the connection closes.
    static let discardDeadline = 10

    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let webSocketResponder: (any WebSocketResponder)?
    let counters: ServerCounters
    let stopSignal: StopSignal
    let failure: ServerFailure
    let completions = CompletionQueue()
    private let shutdownRequested = Atomic<Bool>(false)

    // Set up before the service thread starts, then read there only.
    private var context: OpaquePointer?
    private var eventLoop: EventLoop?
    private(set) var workers: WorkerPool?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let cStrings: [UnsafeMutablePointer<CChar>]
    private let interface: UnsafeMutablePointer<CChar>?
    private let vhostName: UnsafeMutablePointer<CChar>
    /// The WebSocket keep-alive (lws' validity timer), read by lws for the vhost's life.
    private let idlePolicy: UnsafeMutablePointer<lws_retry_bo_t>
    /// The socket lws listens on, found after binding (nil if it could not be told apart).
    private(set) var listener: ListeningSocket?
    private var watchdog: ListenerWatchdog?

    // Service thread.
    var connections: [UInt64: Connection] = [:]
    var shortage = DescriptorShortage()
    /// Every connection's head deadline, in arming order (`HeadDeadlines`).
    var headDeadlines = HeadDeadlines()
    /// Frees memory kept after a flood of connections (E38).
    var memoryTrim = MemoryTrim()
    /// Connections whose reading is paused until their socket takes more of a response (E39),
    /// and when their sockets were last looked at.
    var stalledWriters: [UInt64] = []
    var stalledWritersChecked = ContinuousClock.now
    var nextConnectionID: UInt64 = 1
    var nextRequestID: UInt64 = 1
    let headReader: RequestHeadReader
    /// `LWS_PRE` bytes of headroom, then room for one write (headers plus a body chunk).
    let scratch: UnsafeMutablePointer<UInt8>
    let scratchCapacity: Int
    let preamble: Int
    /// Header names copied here NUL-terminated with their colon, for `lws_add_http_header_by_name`.
    let headerName: UnsafeMutablePointer<UInt8>
    static let headerNameCapacity = 256
    var batch: [CompletionQueue.Completion] = []
    var attention: [UInt64] = []
    var draining = false
    /// What each holder of request bodies has reserved now (see `reserveBody`); entries at
    /// zero are removed.
    var holders: [String: HolderShare] = [:]
    private var drainDeadline: ContinuousClock.Instant?
    private var exitRequested = false

    init(configuration: HTTPServerConfiguration, responder: any HTTPResponder,
         webSocketResponder: (any WebSocketResponder)?, counters: ServerCounters, stopSignal: StopSignal,
         failure: ServerFailure) {
        self.configuration = configuration
        self.responder = responder
        self.webSocketResponder = webSocketResponder
        self.counters = counters
        self.stopSignal = stopSignal
        self.failure = failure
        headReader = RequestHeadReader(maxHeaderBytes: configuration.maxHeaderBytes,
                                       customHeaderNames: configuration.customHeaderNames,
                                       trustedProxies: configuration.trustedProxies)
        preamble = Int(tandem_lws_pre())
        scratchCapacity = Self.writeChunkSize
        scratch = .allocate(capacity: preamble + scratchCapacity)
        headerName = .allocate(capacity: Self.headerNameCapacity + 2)

        let protocolName = strdup("tandem-http")!
        vhostName = strdup("tandem")!
        let host = configuration.host
        interface = (host.isEmpty || host == "0.0.0.0" || host == "*") ? nil : strdup(host)
        cStrings = [protocolName, vhostName] + (interface.map { [$0] } ?? [])

        // lws reads the protocol list (terminated by a zeroed entry) for the context's life.
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = serviceCallback
        protocols[0].per_session_data_size = 0
        protocols[0].tx_packet_size = Self.writeChunkSize + 4096
        idlePolicy = .allocate(capacity: 1)
        idlePolicy.initialize(to: lws_retry_bo_t.idle(configuration.webSocket))
    }

    deinit {
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        cStrings.forEach { free($0) }
        scratch.deallocate()
        headerName.deallocate()
        idlePolicy.deallocate()
    }

    /// Creates the context and binds the listening socket on the calling thread.
    func open() throws(HTTPServerError) {
        LWSLogging.configure()
        let address = "\(configuration.host):\(configuration.port)"

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.max_http_header_data = UInt16(configuration.maxHeaderBytes)
        info.pt_serv_buf_size = 64 * 1024
        info.timeout_secs = UInt32(configuration.idleTimeout)
        info.timeout_secs_ah_idle = UInt32(configuration.idleTimeout)
        guard let eventLoop = EventLoop() else {
            throw HTTPServerError(code: .contextCreationFailed, reason: "cannot create an epoll loop (errno \(errno))", address: address)
        }
        eventLoop.configure(&info)
        guard let context = lws_create_context(&info) else {
            eventLoop.destroy()
            throw HTTPServerError(code: .contextCreationFailed, reason: "lws_create_context failed", address: address)
        }

        info.port = Int32(configuration.port)
        info.iface = UnsafePointer(interface)
        info.vhost_name = UnsafePointer(vhostName)
        info.protocols = UnsafePointer(protocols)
        info.keepalive_timeout = Int32(configuration.keepAliveTimeout)
        // A request line lws cannot read becomes a raw socket handed to us (ProtocolErrors),
        // instead of lws' own bare 403.
        info.options |= UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        // Pings and the dead-peer hang-up for WebSockets; HTTP connections have no validity
        // timer in lws 4.1 (the h1 role issues no keep-alive), so they are unaffected.
        info.retry_and_idle_policy = UnsafePointer(idlePolicy)
        if let interface, strchr(interface, Int32(UInt8(ascii: ":"))) == nil {
            // An IPv4 literal: with IPv6 enabled lws would try to bind it as an IPv6 address.
            info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        }
        guard let vhost = lws_create_vhost(context, &info) else {
            lws_context_destroy(context)
            eventLoop.destroy()
            throw HTTPServerError(code: .bindFailed, reason: "cannot listen (address in use or not available)",
                                  address: address)
        }
        counters.port = Int(lws_get_vhost_listen_port(vhost))
        self.context = context
        self.eventLoop = eventLoop
        shortage.spare = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        var descriptors = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &descriptors) == 0 {
            shortage.connectionLimit = DescriptorShortage.connectionLimit(descriptorLimit: UInt64(descriptors.rlim_cur),
                                                                          open: DescriptorShortage.openDescriptors() ?? 0)
        }
        completions.open(context: context)
        if configuration.listenerCheckInterval > 0 {
            listener = ListeningSocket.find(port: counters.port, host: configuration.host)
            if listener == nil {
                ErrorReport.line("cannot tell which descriptor listens on port \(counters.port); its watchdog is off")
            }
        }
    }

    /// Starts the workers and the service thread; `open()` must have succeeded.
    func startThreads() {
        if !configuration.inlineResponder {
            workers = WorkerPool(workerCount: configuration.workerCount,
                                 capacity: configuration.maxQueuedRequests,
                                 runningLimit: configuration.runningWorkerLimit,
                                 stallMicroseconds: configuration.workerStallMicroseconds,
                                 responder: responder, completions: completions, serverID: serverID)
        }
        // Set before the service thread starts: its tearDown disarms it.
        if let listener {
            watchdog = ListenerWatchdog(socket: listener, interval: configuration.listenerCheckInterval) { [self] problem in
                listenerLost(problem)
            }
        }
        let thread = Thread { [self] in self.run() }
        thread.name = "tandem-http-service"
        thread.stackSize = 1 << 20
        thread.start()
        watchdog?.start()
    }

    /// The watchdog found the listening socket gone: nothing can connect any more, and lws may
    /// spin on the stale descriptor. Say so, record why, and stop (in-flight requests finish).
    private func listenerLost(_ problem: String) {
        let reason = "the listening socket is lost (\(problem)); the server stops so that it can be restarted"
        ErrorReport.line("port \(counters.port): " + reason)
        failure.record(HTTPServerError(code: .listenerLost, reason: reason, address: "\(configuration.host):\(counters.port)"))
        requestShutdown()
    }

    /// Asks the service thread to drain and stop; returns at once. Any thread.
    func requestShutdown() {
        shutdownRequested.store(true, ordering: .releasing)
        completions.wake()
    }

    /// Identifies this server's threads (see `ServerThread`).
    var serverID: Int { ObjectIdentifier(self).hashValue }

    /// Whether the calling thread is the service thread or one of the workers.
    var isServerThread: Bool { ServerThread.isCurrent(serverID: serverID) }

    private func run() {
        ServerThread.mark(serverID: serverID)
        Thread.current.threadDictionary[Self.threadKey] = self
        if let eventLoop, let context {
            eventLoop.run(context) {
                expireHeadDeadlines()
                reportShortageIfDue()
                memoryTrim.afterTurn(open: connections.count)
                if !stalledWriters.isEmpty { resumeStalledWriters() }
                return !exitRequested
            }
        }
        tearDown()
    }

    private func tearDown() {
        // Before lws closes the listening socket: the watchdog must not take that for a loss.
        watchdog?.disarm()
        let now = ContinuousClock.now
        let deadline = max(drainDeadline ?? now, now + .milliseconds(500))
        if let workers {
            workers.close()
            let seconds = Double((deadline - now).components.seconds)
                + Double((deadline - now).components.attoseconds) / 1e18
            _ = workers.waitForExit(until: Date(timeIntervalSinceNow: seconds))
        }
        // From here no worker can reach the context, even one still stuck in a responder.
        completions.close()
        if let context {
            lws_context_destroy(context)
        }
        context = nil
        eventLoop?.destroy()
        eventLoop = nil
        if shortage.spare >= 0 { close(shortage.spare) }
        shortage.spare = -1
        Thread.current.threadDictionary[Self.threadKey] = nil
        counters.reset()
        stopSignal.set()
    }

    // MARK: Shutdown (service thread)

    /// Called on every wake-up once shutdown was requested.
    func advanceShutdown() {
        guard shutdownRequested.load(ordering: .acquiring) else { return }
        if !draining {
            draining = true
            drainDeadline = .now + .milliseconds(Int(configuration.shutdownGracePeriod * 1000))
            // Idle keep-alive connections would only receive 503s from now on.
            for connection in connections.values where connection.phase == .idle {
                lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            }
            closeWebSockets()
        }
        checkDrained()
    }

    /// Ends the service loop once nothing is in flight and every WebSocket has closed, or the
    /// grace period is over.
    func checkDrained() {
        guard draining, let drainDeadline else { return }
        if (counters.inFlightRequests == 0 && counters.openWebSockets == 0) || ContinuousClock.now >= drainDeadline {
            exitRequested = true
        }
    }

    // MARK: Connections (service thread)

    func connection(for wsi: OpaquePointer) -> Connection? {
        guard let box = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<Connection>.fromOpaque(box).takeUnretainedValue()
    }

    /// `LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED`: lws has set the wsi's opaque user data by
    /// now (it overwrites it after `LWS_CALLBACK_WSI_CREATE`), so the link is made here.
    func connectionOpened(_ wsi: OpaquePointer) -> Int32 {
        var remote = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            buffer.initialize(repeating: 0)
            _ = lws_get_peer_simple(wsi, buffer.baseAddress, buffer.count - 1)
            return String(cString: buffer.baseAddress!)
        }
        if remote.hasPrefix("::ffff:"), remote.contains(".") {
            remote.removeFirst(7)
        }
        let connection = Connection(id: nextConnectionID, wsi: wsi, remoteAddress: remote)
        nextConnectionID += 1
        connections[connection.id] = connection
        lws_set_opaque_user_data(wsi, Unmanaged.passUnretained(connection).toOpaque())
        counters.connectionOpened()
        armHeadTimer(connection)
        return 0
    }

    /// `LWS_CALLBACK_WSI_DESTROY`: the last word on a wsi, raised for every close.
    func connectionDestroyed(_ wsi: OpaquePointer) {
        guard let connection = connection(for: wsi) else { return }
        lws_set_opaque_user_data(wsi, nil)
        connections[connection.id] = nil
        shortage.closing[connection.id] = nil
        counters.connectionClosed()
        releaseBody(connection)
        switch connection.phase {
        case .idle, .admitting, .awaitingResponse, .discardingBody, .webSocket:
            // An awaited response is uncounted when it comes back and finds no connection.
            break
        case .receivingBody, .responding:
            counters.requestEnded()
        }
        checkDrained()
    }
}
