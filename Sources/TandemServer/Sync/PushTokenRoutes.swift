import TandemCrypto
import TandemCore
import TandemHTTP
import TandemStore

/// tokens/create and tokens/register (CloudKit Web Services; path without a database segment:
/// `/database/1/{container}/{environment}/tokens/...`), and the long-poll `webcourierURL`.
enum PushTokenRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "tokens/create", method: "POST", databases: [.private],
                          summary: "A push token for this user, with its long-poll webcourierURL", requestSchema: "TokensCreateRequest",
                          responseSchema: "TokensCreateResponse") { context in
                let environment = try apnsEnvironment(try context.jsonBody())
                let token = Digest.hex(Digest.randomBytes(32))
                _ = services.webCourier.register(token: token, user: context.user!.recordName, container: context.container,
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
                guard services.webCourier.register(token: token, user: context.user!.recordName, container: context.container,
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

    /// GET /webcourier/1/{token}[?timeout=SECONDS]: `{"notifications": [...]}`, waiting up to
    /// `timeout` (default 25, at most 60) seconds when none is waiting. The token is the credential.
    static func poll(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let token = String(context.request.head.path.dropFirst(WebCourier.prefix.count))
        var timeout = 25.0
        if let text = context.parameters["timeout"] {
            guard let seconds = Double(text), seconds >= 0 else { throw CloudKitError.badRequest("timeout must be a number of seconds") }
            timeout = min(seconds, 60)
        }
        guard let notifications = services.webCourier.poll(token: token, timeout: timeout) else {
            throw CloudKitError(.notFound, "unknown push token; create one with tokens/create")
        }
        return Responses.json(.object(["notifications": .array(notifications.map(\.json))]))
    }
}
