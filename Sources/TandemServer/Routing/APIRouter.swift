import Foundation
import Synchronization
import TandemCore
public import TandemHTTP
import TandemStore

/// The HTTP responder: routes a request, authenticates it, runs its handler on the worker
/// thread it was given, renders errors as CloudKit error bodies, and records metrics and the
/// request log (DESIGN.md §3).
public final class APIRouter: HTTPResponder {
    let services: Services
    let metrics: Metrics
    let log: RequestLog
    /// CloudKit Web Services operations by name, one route per method.
    let routes: [String: [DatabaseRoute]]
    /// Tandem's own operations under `/tandem/1/{container}/{environment}/`.
    let tandemRoutes: [String: [DatabaseRoute]]
    let web: WebPages
    /// The web console (`/console/`) and `GET /`.
    let console: ConsolePage
    let openAPI: [UInt8]
    /// Containers seen to exist, per thread; containers are never deleted, so a hit needs no
    /// database read.
    let knownContainers = PerThread { ContainerSet() }
    /// Reports open connections for /metrics; set once the HTTP server exists.
    let connectionCount: @Sendable () -> Int
    /// Reports dropped droppable WebSocket messages for /metrics.
    let droppedMessages: @Sendable () -> Int
    /// Turns no-space-left failures into a retryable error, logged once a minute.
    let diskFull: DiskFull
    /// Reports the request bodies the HTTP layer holds, for /metrics.
    let bodies: @Sendable () -> HTTPBodyFigures
    /// `/healthz`'s read of the store.
    let health: StoreHealth

    init(services: Services, metrics: Metrics, log: RequestLog, connectionCount: @escaping @Sendable () -> Int,
         droppedMessages: @escaping @Sendable () -> Int = { 0 }, bodies: @escaping @Sendable () -> HTTPBodyFigures = { HTTPBodyFigures() }) {
        self.droppedMessages = droppedMessages
        self.bodies = bodies
        self.services = services
        self.metrics = metrics
        self.log = log
        self.diskFull = DiskFull(log: log)
        health = StoreHealth(store: services.store)
        self.connectionCount = connectionCount
        let table = DatabaseRoutes.all(services)
        let tandemTable = DatabaseRoutes.tandem(services)
        routes = Dictionary(grouping: table, by: \.operation)
        tandemRoutes = Dictionary(grouping: tandemTable, by: \.operation)
        web = WebPages(services: services)
        console = ConsolePage(services: services, log: log, monitor: ConsoleMonitor(metrics: metrics, openConnections: connectionCount))
        // Ends with a newline, as every JSON answer (F5).
        openAPI = JSONWriter.bytes(OpenAPIDocument.build(routes: table + tandemTable)) + [UInt8(ascii: "\n")]
    }

    // MARK: HTTPResponder

    /// The response header carrying a rotated web auth token; CloudKit JS replaces its session
    /// from it (decisions A13).
    static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"

    /// CloudKit JS's prefix for push-token registration (its `device` API module).
    static let devicePrefix = "/device/1/"

    public func bodyLimit(for head: HTTPRequestHead) -> Int {
        bodyPolicy(for: head).limit
    }

    public func bodyPolicy(for head: HTTPRequestHead) -> HTTPBodyPolicy {
        BodyAdmission.policy(for: head)
    }

    public func admit(_ head: HTTPRequestHead) -> HTTPResponse? {
        if case .refused(let response) = admission(for: head) { return response }
        return nil
    }

    public func admission(for head: HTTPRequestHead) -> HTTPAdmission {
        let uuid = RequestID.make()
        let error: CloudKitError
        do {
            switch try BodyAdmission.decide(head, services) {
            case .admitted(let holder): return .admitted(holder: holder)
            case .refused(let refusal): error = refusal
            }
        } catch let refusal as CloudKitError {
            error = refusal
        } catch let failure as StoreError where StoreRefusal.answers(failure) {
            // Admission reads the store (who sends this); a database that is busy or away is the
            // same 503 with retryAfter here as after the body (P39; seen as a 500 during a crash).
            error = StoreRefusal.answer(for: failure, log: log, uuid: uuid)
        } catch {
            log.message("request \(uuid) failed before its body was read: \(error)")
            return .refused(Responses.error(CloudKitError(.internalError, "internal error; see the server log for request \(uuid)"), uuid: uuid))
        }
        var response = Responses.error(error, uuid: uuid)
        response.headers += CORS.headers(for: head, authenticator: services.authenticator)
        log.record(method: head.method, path: head.path, status: response.status, microseconds: 0, bytes: 0, uuid: uuid)
        let endpoint = head.path.hasPrefix(AssetRoutes.uploadPrefix) ? "assets/upload-bytes" : head.path.hasPrefix(JournalRoutes.prefix) ? "journal" : "admission"
        metrics.observe(endpoint: endpoint, status: response.status, seconds: 0)
        return .refused(response)
    }

    /// The service thread's admission from memory (decisions E22): see `BodyAdmission.quick`.
    public func quickAdmission(for head: HTTPRequestHead) -> HTTPAdmission? {
        guard case .admitted(let holder)? = BodyAdmission.quick(head, services) else { return nil }
        return .admitted(holder: holder)
    }

    /// The database operations that only read, by the method each is served with (CloudKit
    /// Web Services: records/lookup, records/query, zones/list, zones/lookup, changes/database,
    /// changes/zone, subscriptions/list, subscriptions/lookup, and the older records/changes and
    /// zones/changes): they wait for a running worker rather than wake another past the
    /// running-worker limit (decisions E28).
    static let briefOperations: [(method: String, suffix: String)] = [
        ("POST", "/records/lookup"), ("POST", "/records/query"), ("GET", "/zones/list"), ("POST", "/zones/lookup"),
        ("POST", "/changes/database"), ("POST", "/changes/zone"), ("POST", "/records/changes"), ("POST", "/zones/changes"),
        ("GET", "/subscriptions/list"), ("POST", "/subscriptions/lookup"),
    ]

    public func runsBriefly(_ head: HTTPRequestHead) -> Bool { Self.isBrief(head) }

    /// `runsBriefly`, from the head alone.
    static func isBrief(_ head: HTTPRequestHead) -> Bool {
        head.path.hasPrefix(BodyAdmission.databasePrefix)
            && briefOperations.contains { $0.method == head.method && head.path.hasSuffix($0.suffix) }
    }

    public func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
        let code: ServerErrorCode = switch status {
        case 413: .limitExceeded
        case 429: .throttled
        case 503: .tryAgainLater
        default: .badRequest
        }
        var error = CloudKitError(code, reason)
        let limit = head.map { bodyPolicy(for: $0).limit } ?? Limits.jsonBodyBytes
        // The HTTP layer's reason says the same; one sentence, with the limit of this path.
        if status == 413 { error.reason = "the request body is larger than the \(limit) bytes allowed here" }
        if status == 503 || status == 429 { error.retryAfter = 1 }
        let uuid = RequestID.make()
        log.record(method: head?.method ?? "-", path: head?.path ?? "-", status: status, microseconds: 0, bytes: 0, uuid: uuid)
        metrics.observe(endpoint: "http", status: status, seconds: 0)
        // A browser's form over a page's limit gets a page (C53).
        if status == 413, let head, let page = FormTooLargePage.response(for: head, limit: limit, uuid: uuid) { return page }
        var response = Responses.error(error, uuid: uuid, status: status)
        if let head { response.headers += CORS.headers(for: head, authenticator: services.authenticator) }
        return response
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        var context = RequestContext(request: request, publicURL: services.publicURL)
        context.assetSigner = services.assetRoutes.signer
        var (endpoint, response): (String, HTTPResponse)
        if let preflight = CORS.preflight(request.head, authenticator: services.authenticator) {
            // A browser's preflight never reaches a handler (J10).
            (endpoint, response) = ("cors-preflight", preflight)
        } else {
            (endpoint, response) = route(&context)
            if let rotated = context.rotatedWebAuthToken { response.headers.append((Self.webAuthTokenHeader, rotated)) }
            response.headers += CORS.headers(for: request.head, authenticator: services.authenticator)
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        metrics.observe(endpoint: endpoint, status: response.status, seconds: Double(elapsed) / 1e9)
        log.record(method: request.head.method, path: request.head.path, status: response.status,
                   microseconds: Int(elapsed / 1000), bytes: response.bodyLength, uuid: context.uuid)
        return response
    }

    private func route(_ context: inout RequestContext) -> (String, HTTPResponse) {
        let path = context.request.head.path
        let method = context.request.head.method
        // Errors are counted under the endpoint they happened on, once it is known.
        var endpoint = "unknown"
        do {
            switch path {
            case "/healthz":
                // Reflects the store: 503 TRY_AGAIN_LATER while it cannot serve a read (P60);
                // both answers name the store's and the bus's state (N61).
                if let refusal = health.check(log: log, uuid: context.uuid) {
                    var response = Responses.error(refusal, uuid: context.uuid)
                    var body = ErrorCodec.encode(refusal, uuid: context.uuid).objectValue ?? [:]
                    body["store"] = ["state": "unavailable"]
                    body["bus"] = services.bus.health
                    response.body = JSONWriter.bytes(.object(body)) + [0x0A]
                    return ("healthz", response)
                }
                return ("healthz", Responses.json(["status": "ok", "store": ["state": "ok"], "bus": services.bus.health]))
            case "/metrics":
                let text = metrics.render(openConnections: connectionCount(), droppedMessages: droppedMessages(), bodies: bodies())
                    + services.bus.metricsText
                return ("metrics", HTTPResponse(status: 200, headers: [("content-type", "text/plain; version=0.0.4")], body: Array(text.utf8)))
            case "/openapi.json":
                return ("openapi", HTTPResponse(status: 200, headers: [("content-type", "application/json")], body: openAPI))
            default:
                break
            }
            if path.hasPrefix(AssetRoutes.uploadPrefix) {
                endpoint = "assets/upload-bytes"
                guard method == "POST" else { throw MethodNotAllowed(allowed: "POST") }
                return (endpoint, try services.assetRoutes.receiveUpload(context))
            }
            if path.hasPrefix(JournalRoutes.prefix) {
                endpoint = "journal"
                return (endpoint, try JournalRoutes.respond(context, services))
            }
            if path.hasPrefix(WebCourier.prefix) {
                endpoint = "webcourier"
                guard method == "GET" else { throw MethodNotAllowed(allowed: "GET") }
                return (endpoint, try PushTokenRoutes.poll(context, services))
            }
            if path.hasPrefix(AvatarRoutes.downloadPrefix) {
                endpoint = "avatars/download"
                guard method == "GET" else { throw MethodNotAllowed(allowed: "GET") }
                return (endpoint, try AvatarRoutes(services: services).download(context))
            }
            if path.hasPrefix(AssetRoutes.downloadPrefix) {
                endpoint = "assets/download"
                // HEAD: the size and headers without the bytes (download managers ask first).
                guard method == "GET" || method == "HEAD" else { throw MethodNotAllowed(allowed: "GET, HEAD") }
                return (endpoint, try services.assetRoutes.download(&context, authenticator: services.authenticator))
            }
            if let response = try AccountRoutes.respond(context, services, endpoint: &endpoint) {
                return (endpoint, response)
            }
            if let page = try console.respond(context) {
                endpoint = "console"
                return (endpoint, page)
            }
            if let page = try web.respond(&context) {
                endpoint = "web"
                return (endpoint, page)
            }
            if let response = try SchemaRoutes.respond(context, services) {
                endpoint = "schema"
                return (endpoint, response)
            }
            if let response = try LinkRoutes.adminRespond(context, services) {
                endpoint = "links/admin"
                return (endpoint, response)
            }
            if path.hasPrefix("/tandem/1/") {
                let segments = Array(path.pathSegments.dropFirst(3))
                guard segments.count >= 3 else {
                    throw CloudKitError(.notFound, "expected /tandem/1/{container}/{environment}/{operation}")
                }
                let operation = segments[2...].joined(separator: "/")
                guard let candidates = tandemRoutes[operation] else { throw CloudKitError(.notFound, "unknown operation '\(operation)'") }
                endpoint = operation
                let route = try pick(candidates, method: method)
                try prepare(&context, container: segments[0], environment: segments[1], database: .private, method: method)
                return (endpoint, try route.handler(context))
            }
            let isDevice = path.hasPrefix(Self.devicePrefix)
            guard path.hasPrefix("/database/1/") || isDevice else {
                throw CloudKitError(.notFound, "no endpoint at \(path)")
            }
            var segments = Array(path.pathSegments.dropFirst(3))
            // tokens/create and tokens/register have no database segment: CloudKit JS sends them as
            // /device/1/{container}/{environment}/tokens/..., CloudKit Web Services documents them
            // under /database/1/; both are served the same way.
            if segments.count == 4 && segments[2] == "tokens" {
                segments.insert(DatabaseType.private.rawValue, at: 2)
            } else if isDevice {
                throw CloudKitError(.notFound, "expected /device/1/{container}/{environment}/tokens/{create|register}")
            }
            guard segments.count >= 4 else {
                throw CloudKitError(.notFound, "expected /database/1/{container}/{environment}/{database}/{operation}")
            }
            let operation = segments[3...].joined(separator: "/")
            guard let candidates = routes[operation] else {
                throw CloudKitError(.notFound, "unknown operation '\(operation)'")
            }
            endpoint = operation
            let route = try pick(candidates, method: method)
            guard let database = DatabaseType(rawValue: segments[2]) else {
                throw CloudKitError.badRequest("database must be 'public', 'private' or 'shared', not '\(segments[2])'")
            }
            guard route.databases.contains(database) else {
                let served = route.databases.map(\.rawValue).sorted().joined(separator: ", ")
                throw CloudKitError.badRequest("\(operation) is served for the \(served) database, not '\(database.rawValue)'")
            }
            try prepare(&context, container: segments[0], environment: segments[1], database: database, method: method,
                        anonymous: PublicDatabase.allowsAnonymous(operation, database: database))
            return (endpoint, try route.handler(context))
        } catch let error as CloudKitError {
            return (endpoint, Responses.error(error, uuid: context.uuid))
        } catch let error as MethodNotAllowed {
            var response = Responses.error(.badRequest("\(method) is not allowed here; use \(error.allowed)"), uuid: context.uuid, status: 405)
            response.headers.append(("allow", error.allowed))
            return (endpoint, response)
        } catch let error as UnsupportedMediaType {
            return (endpoint, Responses.error(.badRequest("content-type '\(error.type)' is not accepted; \(error.accepted)"),
                                             uuid: context.uuid, status: 415))
        } catch let error as StoreError where StoreRefusal.answers(error) {
            return (endpoint, Responses.error(StoreRefusal.answer(for: error, log: log, uuid: context.uuid), uuid: context.uuid))
        } catch where DiskFull.matches(error) {
            return (endpoint, Responses.error(diskFull.refusal(for: error), uuid: context.uuid))
        } catch {
            log.message("request \(context.uuid) failed: \(error)")
            return (endpoint, Responses.error(CloudKitError(.internalError, "internal error; see the server log for request \(context.uuid)"),
                                             uuid: context.uuid))
        }
    }

    /// The route for `method` among an operation's routes; 405 naming the allowed methods otherwise.
    private func pick(_ candidates: [DatabaseRoute], method: String) throws -> DatabaseRoute {
        guard let route = candidates.first(where: { $0.method == method }) else {
            throw MethodNotAllowed(allowed: candidates.map(\.method).joined(separator: ", "))
        }
        return route
    }

    /// Checks the content type, authenticates, and fills in container, environment and database.
    /// `anonymous`: a request without credentials goes on with no user (public-database reads).
    private func prepare(_ context: inout RequestContext, container: String, environment: String, database: DatabaseType,
                         method: String, anonymous: Bool = false) throws {
        guard let environment = Environment(rawValue: environment) else {
            throw CloudKitError.badRequest("environment must be 'development' or 'production', not '\(environment)'")
        }
        if method == "POST" { try checkContentType(context.request) }
        context.container = container
        context.environment = environment
        context.database = database
        if let signed = try ServerKeySignature.headers(context.request.head) {
            // Signed with a server-to-server key: the signature decides, other credentials are not read (J8).
            context.user = try ServerKeySignature.user(signed, request: context.request, container: container, database: database,
                                                       store: services.store)
            try requireContainer(context.container)
            return
        }
        do {
            let signedIn = try services.authenticator.signedIn(
                headers: context.request.head.headers["authorization"], parameters: context.parameters,
                container: context.container, signInURL: context.baseURL + "/signin", rotating: true)
            context.user = signedIn.user
            context.rotatedWebAuthToken = signedIn.rotatedToken
        } catch let error as CloudKitError where anonymous && error.code == .authenticationRequired {
            context.user = nil
        }
        try requireContainer(context.container)
    }

    private func requireContainer(_ id: String) throws {
        let known = knownContainers.current
        if known.ids.contains(id) { return }
        guard try services.store.read({ try $0.containerExists(id) }) else {
            throw CloudKitError(.notFound, "no container '\(id)' (create it with: tandem container create \(id))")
        }
        known.ids.insert(id)
    }

    private func checkContentType(_ request: HTTPRequest) throws {
        guard let sent = request.head.headers["content-type"] else { return }
        // The two types every client sends, as they send them, without lower-casing a copy (E17).
        if sent == "application/json" || sent == "text/plain" { return }
        let type = sent.lowercased()
        let base = String(type.prefix { $0 != ";" }.withoutSurroundingSpaces)
        let accepted = ["application/json", "text/plain", "application/x-www-form-urlencoded", ""]
        // curl sends x-www-form-urlencoded for -d without -H; CloudKit's own examples send text/plain.
        guard accepted.contains(base) || base.hasSuffix("+json") else { throw UnsupportedMediaType(type: base) }
    }
}

struct MethodNotAllowed: Error { var allowed: String }
/// A body of a type the endpoint does not take: 415 with `BAD_REQUEST`.
struct UnsupportedMediaType: Error {
    var type: String
    /// What to send instead.
    var accepted = "send JSON (application/json or text/plain)"
}

/// One thread's known containers; only its own thread touches it.
final class ContainerSet: @unchecked Sendable {
    var ids = Set<String>()
}
