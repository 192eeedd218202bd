import TandemCrypto
import TandemCore
import TandemHTTP
import TandemStore

/// tokens/create and tokens/register (CloudKit Web Services; path without a database segment:
/// `/database/1/{container}/{environment}/tokens/...`, and `/device/1/...` as CloudKit JS sends
/// it), and the long-poll `webcourierURL`.
enum PushTokenRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "tokens/create", method: "POST", databases: [.private],
                          summary: "A push token for this user, with its long-poll webcourierURL", requestSchema: "TokensCreateRequest",
                          responseSchema: "TokensCreateResponse") { context in
                let environment = try apnsEnvironment(try context.jsonBody())
                let token = Digest.hex(Digest.randomBytes(32))
                _ = try services.webCourier.register(token: token, user: context.user!.recordName, container: context.container,
                                                 environment: context.environment.rawValue)
                return Responses.json(.object(["apnsEnvironment": .string(environment), "apnsToken": .string(token),
                                               "webcourierURL": .string(context.baseURL + WebCourier.prefix + token)]))
            },
            DatabaseRoute(operation: "tokens/register", method: "POST", databases: [.private],
                          summary: "Register a push token for this user", requestSchema: "TokensRegisterRequest",
                          responseSchema: "TokensRegisterResponse") { context in
                let body = try context.jsonBody()
                let environment = try apnsEnvironment(body)
                guard let token = body["apnsToken"]?.stringValue, (32...200).contains(token.utf8.count),
                      token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
                    throw CloudKitError.badRequest("tokens/register needs an 'apnsToken' (32–200 printable characters, no '/')")
                }
                guard try services.webCourier.register(token: token, user: context.user!.recordName, container: context.container,
                                                   environment: context.environment.rawValue) else {
                    throw CloudKitError(.accessDenied, "this apnsToken is registered to another user, or the server holds too many tokens")
                }
                return Responses.json(.object(["apnsEnvironment": .string(environment), "apnsToken": .string(token),
                                               "webcourierURL": .string(context.baseURL + WebCourier.prefix + token)]))
            },
        ]
    }

    static func apnsEnvironment(_ body: JSONObject) throws(CloudKitError) -> String {
        guard let value = body["apnsEnvironment"]?.stringValue, value == "development" || value == "production" else {
            throw .badRequest("'apnsEnvironment' must be development or production")
        }
        return value
    }

    /// GET /webcourier/1/{token}[?timeout=SECONDS][&format=tandem], waiting up to `timeout`
    /// (default 25, at most 60) seconds when no notification is waiting. The token is the credential.
    ///
    /// By default the answer is what CloudKit JS's long poll reads: one notification per response,
    /// as its APNs-style payload (`{"ck":{...},"aps":{...}}`, see `PushNotification.apnsPayload`),
    /// oldest first, the rest staying queued for the next polls; a poll that ends with none
    /// answers 204 No Content, which CloudKit JS never hands to its listeners (its JSON read of
    /// the empty body fails and it polls again). `format=tandem` answers Tandem's own batch
    /// instead, `{"notifications": [...]}` with every waiting notification, 200 even when empty.
    static func poll(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let token = String(context.request.head.path.dropFirst(WebCourier.prefix.count))
        var timeout = 25.0
        if let text = context.parameters["timeout"] {
            guard let seconds = Double(text), seconds >= 0 else { throw CloudKitError.badRequest("timeout must be a number of seconds") }
            timeout = min(seconds, 60)
        }
        let batch: Bool
        switch context.parameters["format"] {
        case nil, "cloudkitjs": batch = false
        case "tandem": batch = true
        case let other?: throw CloudKitError.badRequest("format must be 'tandem' or 'cloudkitjs', not '\(other)'")
        }
        guard let notifications = try services.webCourier.poll(token: token, timeout: timeout, limit: batch ? .max : 1) else {
            throw CloudKitError(.notFound, "unknown push token; create one with tokens/create")
        }
        if batch { return Responses.json(.object(["notifications": .array(notifications.map(\.json))])) }
        guard let first = notifications.first else { return HTTPResponse(status: 204, headers: [], body: []) }
        return Responses.json(first.apnsPayload)
    }
}
