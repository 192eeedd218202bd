import Foundation
internal import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import TandemCore

/// Sends requests to one container and environment: builds URLs, signs them, decodes JSON and
/// CloudKit error dictionaries, and retries by the `RetryPolicy`.
final class Transport: Sendable {
    let serverURL: URL
    let containerIdentifier: String
    let environment: Container.Environment
    let configuration: Container.Configuration
    private let currentCredentials: Mutex<Credentials>
    fileprivate let session: URLSession

    init(serverURL: URL, containerIdentifier: String, environment: Container.Environment, credentials: Credentials,
         configuration: Container.Configuration) {
        self.serverURL = serverURL
        self.containerIdentifier = containerIdentifier
        self.environment = environment
        currentCredentials = Mutex(credentials)
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout
        session = URLSession(configuration: sessionConfiguration)
    }

    /// The credentials requests are signed with now (replaced by sign-in and by token rotation).
    var credentials: Credentials { currentCredentials.withLock { $0 } }

    /// Signs later requests with `credentials` (requests already sent keep theirs).
    func replaceCredentials(_ credentials: Credentials) {
        currentCredentials.withLock { $0 = credentials }
    }

    /// The rotated web auth token of a response (`X-Apple-CloudKit-Web-Auth-Token`, decisions
    /// A13) replaces the token `presented` in the current credentials; a token replaced meanwhile
    /// (by another response or the app) is left alone. Tells `Configuration.credentialsChanged`.
    func adoptRotatedToken(_ rotated: String, presented: String) {
        let adopted: Credentials? = currentCredentials.withLock { current in
            switch current {
            case .userToken(let token) where token == presented: current = .userToken(rotated)
            case .apiToken(let api, let web?) where web == presented: current = .apiToken(api, webAuthToken: rotated)
            default: return nil
            }
            return current
        }
        if let adopted { configuration.credentialsChanged?(adopted) }
    }

    /// The user token a request presents: its Bearer header, else its `ckWebAuthToken`.
    private static func presentedToken(_ request: URLRequest) -> String? {
        if let header = request.value(forHTTPHeaderField: "Authorization"), header.hasPrefix("Bearer ") { return String(header.dropFirst(7)) }
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        return components.queryItems?.first { $0.name == "ckWebAuthToken" }?.value
    }

    /// `/database/1/{container}/{environment}/{database}/{operation}`.
    func databaseURL(_ scope: Database.Scope, _ operation: String) -> URL {
        url("/database/1/\(containerIdentifier)/\(environment.rawValue)/\(scope.rawValue)/\(operation)")
    }

    /// `/tandem/1/{container}/{environment}/{operation}`.
    func tandemURL(_ operation: String) -> URL {
        url("/tandem/1/\(containerIdentifier)/\(environment.rawValue)/\(operation)")
    }

    /// `/journal/1/{container}/{environment}/{sessionID}[/{attachmentID}]` (group session journals).
    func journalURL(sessionID: UUID, attachmentID: UUID?, query: [URLQueryItem] = []) -> URL {
        var path = "/journal/1/\(containerIdentifier)/\(environment.rawValue)/\(sessionID.uuidString)"
        if let attachmentID { path += "/\(attachmentID.uuidString)" }
        return url(path, extra: query)
    }

    /// `/journal/1/{container}/{environment}/preview[/{checksum}]` (activity preview images).
    func previewURL(checksum: String?) -> URL {
        url("/journal/1/\(containerIdentifier)/\(environment.rawValue)/preview" + (checksum.map { "/" + $0 } ?? ""))
    }

    private func url(_ path: String, extra: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        var items: [URLQueryItem] = []
        if case .apiToken(let api, let web) = credentials {
            items.append(URLQueryItem(name: "ckAPIToken", value: api))
            if let web { items.append(URLQueryItem(name: "ckWebAuthToken", value: web)) }
        }
        if let device = configuration.deviceID { items.append(URLQueryItem(name: "deviceID", value: device)) }
        items += extra
        components.queryItems = items.isEmpty ? nil : items
        return components.url!
    }

    /// The credentials as handshake headers (the stream WebSocket).
    var authorizationHeaders: [(String, String)] {
        if case .userToken(let token) = credentials { return [("Authorization", "Bearer \(token)")] }
        return []
    }

    /// POSTs a JSON body (GET when nil) and returns the JSON answer; retries retryable failures.
    /// With `retryingLostAnswers: false`, a failure after the request may have reached the server
    /// (`networkFailure`, `serverResponseLost`) is thrown instead of retried.
    func json(_ url: URL, body: JSONValue?, retryingLostAnswers: Bool = true) async throws(TandemError) -> JSONValue {
        let data = try await send(url, method: body == nil ? "GET" : "POST", body: body.map { Data(JSONWriter.bytes($0)) },
                                  contentType: "application/json", retryingLostAnswers: retryingLostAnswers)
        do { return try JSONParser.parse([UInt8](data)) } catch {
            throw TandemError(.serverResponseLost, "the server's answer is not JSON: \(error)")
        }
    }

    /// Sends raw bytes or fetches them, with retries.
    func send(_ url: URL, method: String, body: Data?, contentType: String, retryingLostAnswers: Bool = true) async throws(TandemError) -> Data {
        var attempt = 0
        while true {
            do {
                return try await sendOnce(url, method: method, body: body, contentType: contentType)
            } catch {
                attempt += 1
                guard error.isRetryable, attempt < configuration.retryPolicy.maximumAttempts else { throw error }
                if !retryingLostAnswers && (error.code == .networkFailure || error.code == .serverResponseLost) { throw error }
                let delay = configuration.retryPolicy.delay(beforeRetry: attempt - 1, after: error)
                do { try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) } catch {
                    throw TandemError(.operationCancelled, "cancelled while waiting to retry")
                }
            }
        }
    }

    private func sendOnce(_ url: URL, method: String, body: Data?, contentType: String) async throws(TandemError) -> Data {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        for (name, value) in authorizationHeaders { request.setValue(value, forHTTPHeaderField: name) }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await perform(request)
        } catch let error as URLError {
            let code: TandemError.Code = switch error.code {
            case .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed: .networkUnavailable
            case .cancelled: .operationCancelled
            default: .networkFailure
            }
            throw TandemError(code, "\(method) \(url.path): \(error.localizedDescription)")
        } catch {
            throw TandemError(.networkFailure, "\(method) \(url.path): \(error)")
        }
        guard let http = response as? HTTPURLResponse else { throw TandemError(.serverResponseLost, "no HTTP response") }
        if let rotated = http.value(forHTTPHeaderField: "X-Apple-CloudKit-Web-Auth-Token"), !rotated.isEmpty,
           let presented = Self.presentedToken(request) {
            adoptRotatedToken(rotated, presented: presented)
        }
        guard http.statusCode >= 400 else { return data }
        var error = ServerErrors.decode((try? JSONParser.parse([UInt8](data))) ?? .null, scope: .private, httpStatus: http.statusCode)
            ?? TandemError(http.statusCode >= 500 ? .serviceUnavailable : .serverRejectedRequest,
                           "HTTP \(http.statusCode) from \(url.path)", httpStatus: http.statusCode)
        if error.retryAfterSeconds == nil, let header = http.value(forHTTPHeaderField: "Retry-After"), let seconds = Double(header) {
            error.retryAfterSeconds = seconds
        }
        throw error
    }
}

extension Transport {
    /// `session.data(for:)`, cancellable without deadlock. swift-corelibs-foundation's own async
    /// `data(for:)` cancels with `URLSessionTask.cancel()` inside the task's cancellation handler;
    /// that waits on the session queue, which may itself be waiting to resume this task — both
    /// threads stop for good (seen cancelling a task mid-request). Here the cancel runs on another
    /// queue, after the handler returns.
    fileprivate func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = DataTaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                handle.start(task)
            }
        } onCancel: {
            DispatchQueue.global().async { handle.cancel() }
        }
    }
}

/// The data task of one request, started once and cancelled at most once, from any thread.
private final class DataTaskHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        let cancelNow = lock.withLock {
            self.task = task
            return cancelled
        }
        task.resume()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }
}

/// CloudKit error dictionaries (`serverErrorCode`, `reason`, `retryAfter`, `serverRecord`, and
/// Tandem's `tandemReason`).
enum ServerErrors {
    /// The error in a dictionary, or nil when it has no `serverErrorCode`.
    static func decode(_ json: JSONValue, scope: Database.Scope, httpStatus: Int? = nil) -> TandemError? {
        guard let serverCode = json["serverErrorCode"]?.stringValue else { return nil }
        let code = TandemError.Code(serverErrorCode: serverCode, tandemReason: json["tandemReason"]?.stringValue)
        var error = TandemError(code, json["reason"]?.stringValue ?? serverCode,
                                serverErrorCode: serverCode, httpStatus: httpStatus)
        if let retry = json["retryAfter"]?.doubleValue { error.retryAfterSeconds = retry }
        if let server = json["serverRecord"] { error.serverRecord = try? Record(json: server, scope: scope) }
        return error
    }
}
