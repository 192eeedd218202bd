import Foundation
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
    /// The credentials and who they name; every change goes through it (decisions A36).
    let account: AccountTracker
    fileprivate let session: URLSession

    init(serverURL: URL, containerIdentifier: String, environment: Container.Environment, credentials: Credentials,
         configuration: Container.Configuration) {
        self.serverURL = serverURL
        self.containerIdentifier = containerIdentifier
        self.environment = environment
        account = AccountTracker(credentials: credentials, credentialsChanged: configuration.credentialsChanged)
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout
        session = URLSession(configuration: sessionConfiguration)
    }

    /// The credentials requests are signed with now (replaced by sign-in and by token rotation).
    var credentials: Credentials { account.credentials }

    /// Signs later requests with `credentials` (requests already sent keep theirs). The app chose
    /// them: `accountChanges` hears once `users/current` names their user (asked here, in the
    /// background), `credentialsChanged` does not.
    func replaceCredentials(_ credentials: Credentials) {
        let (generation, needsLookup) = account.replace(credentials, user: nil, byContainer: false)
        guard needsLookup else { return }
        Task { [self] in _ = try? await currentUserRecordName(generation: generation) }
    }

    /// `users/current`: the record name of the user the credentials name, told to the account
    /// tracker (a changed user is an `AccountChange`). `generation` is the credentials'
    /// generation the answer is about (now when nil). With `attempts`, at most that many tries.
    func currentUserRecordName(generation: Int? = nil, attempts: Int? = nil) async throws(TandemError) -> String {
        try await currentUser(generation: generation, attempts: attempts).name
    }

    /// `users/current`'s answer (the caller's identity) and its user record name, told to the
    /// account tracker as `currentUserRecordName` does.
    func currentUser(generation: Int? = nil, attempts: Int? = nil) async throws(TandemError) -> (name: String, identity: JSONValue) {
        let generation = generation ?? account.snapshot.generation
        let json = try await self.json(databaseURL(.public, "users/current"), body: nil, attempts: attempts)
        guard let name = json["userRecordName"]?.stringValue else {
            throw TandemError(.internalError, "users/current answered without a userRecordName")
        }
        account.learned(user: name, generation: generation)
        return (name, json)
    }

    /// The user token a request presents: its Bearer header, else its `ckWebAuthToken`.
    private static func presentedToken(_ request: URLRequest) -> String? {
        if let header = request.value(forHTTPHeaderField: "Authorization"), header.hasPrefix("Bearer ") { return String(header.dropFirst(7)) }
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        return components.queryItems?.first { $0.name == "ckWebAuthToken" }?.value
    }

    /// `/auth/1/{container}/{operation}` (the accounts API) with `ckAPIToken` `apiToken`; with
    /// `presentingUser`, the current user token too (`ckWebAuthToken`; a user token goes as Bearer).
    func authURL(_ operation: String, apiToken: String?, presentingUser: Bool) -> URL {
        var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path)
            + "/auth/1/\(containerIdentifier)/\(operation)"
        var items: [URLQueryItem] = []
        if let apiToken { items.append(URLQueryItem(name: "ckAPIToken", value: apiToken)) }
        if presentingUser, case .apiToken(_, let web?) = credentials { items.append(URLQueryItem(name: "ckWebAuthToken", value: web)) }
        components.queryItems = items.isEmpty ? nil : items
        return components.url!
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
    /// `attempts` caps the tries below the retry policy's (1: no retry); without
    /// `presentingCredentials` no Bearer header is sent.
    func json(_ url: URL, body: JSONValue?, retryingLostAnswers: Bool = true, attempts: Int? = nil,
              presentingCredentials: Bool = true) async throws(TandemError) -> JSONValue {
        let data = try await send(url, method: body == nil ? "GET" : "POST", body: body.map { Data(JSONWriter.bytes($0)) },
                                  contentType: "application/json", retryingLostAnswers: retryingLostAnswers, attempts: attempts,
                                  presentingCredentials: presentingCredentials)
        do { return try JSONParser.parse([UInt8](data)) } catch {
            throw TandemError(.serverResponseLost, "the server's answer is not JSON: \(error)")
        }
    }

    /// Sends raw bytes or fetches them, with retries.
    func send(_ url: URL, method: String, body: Data?, contentType: String, retryingLostAnswers: Bool = true, attempts: Int? = nil,
              presentingCredentials: Bool = true) async throws(TandemError) -> Data {
        var attempt = 0
        let maximumAttempts = min(attempts ?? .max, configuration.retryPolicy.maximumAttempts)
        while true {
            do {
                return try await sendOnce(url, method: method, body: body, contentType: contentType, presentingCredentials: presentingCredentials)
            } catch {
                attempt += 1
                guard error.isRetryable, attempt < maximumAttempts else { throw error }
                if !retryingLostAnswers && (error.code == .networkFailure || error.code == .serverResponseLost) { throw error }
                let delay = configuration.retryPolicy.delay(beforeRetry: attempt - 1, after: error)
                do { try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) } catch {
                    throw TandemError(.operationCancelled, "cancelled while waiting to retry")
                }
            }
        }
    }

    private func sendOnce(_ url: URL, method: String, body: Data?, contentType: String,
                          presentingCredentials: Bool) async throws(TandemError) -> Data {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        if presentingCredentials {
            for (name, value) in authorizationHeaders { request.setValue(value, forHTTPHeaderField: name) }
        }
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
            account.adoptRotatedToken(rotated, presented: presented)
        }
        guard http.statusCode >= 400 else { return data }
        var error = ServerErrors.decode((try? JSONParser.parse([UInt8](data))) ?? .null, scope: .private, httpStatus: http.statusCode)
            ?? TandemError(http.statusCode >= 500 ? .serviceUnavailable : .serverRejectedRequest,
                           "HTTP \(http.statusCode) from \(url.path)", httpStatus: http.statusCode)
        if let presented = Self.presentedToken(request) {
            if error.code == .sessionExpired { account.sessionRefused(.expired, presented: presented) }
            if error.code == .sessionRevoked { account.sessionRefused(.revoked, presented: presented) }
        }
        if error.retryAfterSeconds == nil, let header = http.value(forHTTPHeaderField: "Retry-After"), let seconds = Double(header) {
            error.retryAfterSeconds = seconds
        }
        throw error
    }
}

extension Transport {
    /// `session.data(for:)`, cancellable without deadlock or crash: a cancelled request ends at
    /// once with `URLError(.cancelled)`, and its data task is left to run out (answer or request
    /// timeout), its answer dropped. `URLSessionTask.cancel()` is never called (decisions F37):
    /// swift-corelibs-foundation's `cancel()` on a task whose answer is arriving traps
    /// ("Trying to access a behaviour for a task that in not in the registry", seen in CI and
    /// reproduced by `TransportCancellationTests` whether or not the cancel skips tasks whose
    /// completion handler has begun, and when run on the session's delegate queue), and called
    /// inside the cancellation handler it deadlocks against the session queue.
    fileprivate func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let pending = PendingRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                guard pending.wait(continuation) else { return }
                session.dataTask(with: request) { data, response, error in
                    if let error {
                        pending.finish(.failure(error))
                    } else if let response {
                        pending.finish(.success((data ?? Data(), response)))
                    } else {
                        pending.finish(.failure(URLError(.badServerResponse)))
                    }
                }.resume()
            }
        } onCancel: {
            pending.finish(.failure(URLError(.cancelled)))
        }
    }
}

/// The continuation of one request, resumed exactly once: by the data task's completion handler
/// or by cancellation, whichever comes first, from any thread.
private final class PendingRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
    private var early: Result<(Data, URLResponse), any Error>?

    /// Keeps `continuation` until `finish`; false (and resumed) when cancelled before the request started.
    func wait(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) -> Bool {
        let cancelled = lock.withLock {
            if early == nil { self.continuation = continuation }
            return early
        }
        guard let cancelled else { return true }
        continuation.resume(with: cancelled)
        return false
    }

    /// Resumes the waiting caller with `result` the first time; later calls do nothing.
    func finish(_ result: Result<(Data, URLResponse), any Error>) {
        let waiting = lock.withLock { () -> CheckedContinuation<(Data, URLResponse), any Error>? in
            if continuation == nil, early == nil { early = result }
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
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
