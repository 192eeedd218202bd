import Foundation
import Synchronization
import TandemCore
import TandemHTTP

extension TestServer {
    /// tokens/create for `person`: the long-poll URL.
    func webcourier(as person: Person) throws -> String {
        let response = try request("POST", "\(baseURL)/database/1/\(TestServer.container)/development/tokens/create",
                                   body: Data(#"{"apnsEnvironment":"development"}"#.utf8), token: .some(person.token))
        guard let url = response.json["webcourierURL"]?.stringValue else { throw TestFailure("tokens/create: \(response.text)") }
        return url
    }

    /// Long-polls (Tandem's batch format) until `count` notifications arrived or `seconds` passed.
    func notifications(at url: String, count: Int, seconds: Double = 5) throws -> [JSONValue] {
        var all: [JSONValue] = []
        let deadline = Date().addingTimeInterval(seconds)
        while all.count < count && Date() < deadline {
            let wait = max(0.05, min(1, deadline.timeIntervalSinceNow))
            let response = try request("GET", url + "?format=tandem&timeout=\(wait)", token: .some(nil))
            all += response.json["notifications"]?.arrayValue ?? []
        }
        return all
    }

    func subscribe(_ subscription: JSONValue, as person: Person, database: String = "private") throws -> JSONValue {
        let response = try post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": subscription]]],
                                as: person, database: database)
        return response.json["subscriptions"]?.arrayValue?.first ?? response.json
    }
}

/// A webhook endpoint on loopback (TandemHTTP's server): records every POST; answers 500 to the
/// first `failures` requests.
final class WebhookReceiver: HTTPResponder, @unchecked Sendable {
    struct Delivery {
        var body: [UInt8]
        var signature: String?
        var attempt: String?
    }

    let deliveries = Mutex<[Delivery]>([])
    let failures: Int
    private let seen = Mutex(0)
    var server: HTTPServer!

    init(failures: Int = 0) throws {
        self.failures = failures
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, workerCount: 2,
                                                                   customHeaderNames: ["x-tandem-signature", "x-tandem-attempt"]),
                            responder: self)
        try server.start()
    }

    var url: String { "http://127.0.0.1:\(server.port)/hook" }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let count = seen.withLock { value -> Int in
            value += 1
            return value
        }
        if count <= failures { return HTTPResponse(status: 500, body: Array("try later".utf8)) }
        deliveries.withLock {
            $0.append(Delivery(body: request.body, signature: request.head.headers["x-tandem-signature"],
                               attempt: request.head.headers["x-tandem-attempt"]))
        }
        return HTTPResponse(status: 204, body: [])
    }

    func bodyLimit(for head: HTTPRequestHead) -> Int { 1 << 20 }
    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse { HTTPResponse(status: status, body: []) }

    func waitFor(_ count: Int, seconds: Double = 10) -> [Delivery] {
        let deadline = Date().addingTimeInterval(seconds)
        while deliveries.withLock({ $0.count }) < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return deliveries.withLock { $0 }
    }

    deinit { server?.shutdown() }
}
