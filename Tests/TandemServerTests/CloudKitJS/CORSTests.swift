import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Cross-origin access (decisions J10), from what a browser sends and reads: CloudKit JS's
/// `fetch` with `content-type: text/plain` (no preflight; the answer is readable only with
/// `Access-Control-Allow-Origin`), and the preflight of an asset upload's Blob POST. The whole
/// sequence in a real browser is CloudKitJSBrowserTests.
@Suite("CloudKit JS: CORS")
struct CORSTests {
    static let app = "http://127.0.0.1:4123"
    static let lazy = LazyTestServer()

    /// A server with an API token allowing `app`.
    final class World: @unchecked Sendable {
        let server: TestServer
        let apiToken: String
        init() throws {
            server = try CORSTests.lazy.server
            apiToken = try server.apiToken(origins: [CORSTests.app])
        }
        var encodedToken: String { apiToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
    }
    static let worldLock = NSLock()
    nonisolated(unsafe) static var made: World?
    static func world() throws -> World {
        worldLock.lock()
        defer { worldLock.unlock() }
        if let made { return made }
        let world = try World()
        made = world
        return world
    }

    /// Rows: label, method, path after the base URL (`{api}` is the API token, `{c}` the
    /// container), Origin, expected status, expected `Access-Control-Allow-Origin` (nil: none).
    static let rows: [(label: String, method: String, path: String, origin: String?, status: Int, allow: String?)] = [
        ("421 for the allowed origin (what CloudKit JS reads first)", "GET",
         "/database/1/{c}/development/public/users/caller?ckAPIToken={api}", app, 421, app),
        ("another origin gets no allow header", "GET",
         "/database/1/{c}/development/public/users/caller?ckAPIToken={api}", "http://127.0.0.1:4999", 421, nil),
        ("an origin with a path is not an origin", "GET",
         "/database/1/{c}/development/public/users/caller?ckAPIToken={api}", app + "/evil", 421, nil),
        ("no Origin, no CORS", "GET", "/database/1/{c}/development/public/users/caller?ckAPIToken={api}", nil, 421, nil),
        ("no API token, no allow", "GET", "/database/1/{c}/development/public/users/caller", app, 421, nil),
        ("another container's path with this token", "GET",
         "/database/1/iCloud.com.example.other/development/public/users/caller?ckAPIToken={api}", app, 401, nil),
        ("/auth/1/ answers the allowed origin", "POST", "/auth/1/{c}/signin?ckAPIToken={api}", app, 400, app),
        ("/device/1/ answers the allowed origin", "POST", "/device/1/{c}/development/tokens/create?ckAPIToken={api}", app, 421, app),
        ("/tandem/1/ answers the allowed origin", "POST", "/tandem/1/{c}/development/shares/requestAccess?ckAPIToken={api}", app, 421, app),
        ("an unknown upload URL (refused at admission) is readable by anyone", "POST", "/upload/1/up_nothing", app, 404, "*"),
        ("an unknown push token's long poll is readable by anyone", "GET", "/webcourier/1/nothing?timeout=0", app, 404, "*"),
    ]

    @Test("simple requests: which answers carry Access-Control-Allow-Origin", arguments: rows.map(\.label))
    func simple(_ label: String) throws {
        let row = Self.rows.first { $0.label == label }!
        let world = try Self.world()
        let server = world.server
        let path = row.path.replacingOccurrences(of: "{api}", with: world.encodedToken).replacingOccurrences(of: "{c}", with: TestServer.container)
        var headers = ["Content-Type": "text/plain"]
        if let origin = row.origin { headers["Origin"] = origin }
        let body: Data? = row.method == "POST" ? Data("{}".utf8) : nil
        let response = try server.request(row.method, server.baseURL + path, body: body, token: .some(nil), headers: headers)
        #expect(response.status == row.status, "\(label): \(response.status) \(response.text)")
        #expect(response.headers["access-control-allow-origin"] == row.allow, "\(label): \(response.headers)")
        if row.allow != nil {
            #expect(response.headers["access-control-expose-headers"] == "X-Apple-CloudKit-Web-Auth-Token", "\(label)")
            #expect(response.headers["access-control-allow-credentials"] == nil)
        }
        if row.allow != nil && row.allow != "*" { #expect(response.headers["vary"] == "Origin", "\(label): \(response.headers)") }
    }

    @Test("a signed-in request from the allowed origin is readable there, and names the user")
    func signedIn() throws {
        let world = try Self.world()
        let server = world.server
        let url = server.databaseURL("users/caller", database: "public") + "?ckAPIToken=\(world.encodedToken)&ckWebAuthToken="
            + server.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let response = try server.request("GET", url, token: .some(nil), headers: ["Origin": Self.app])
        #expect(response.status == 200 && response.json["userRecordName"]?.stringValue == server.userRecordName, "\(response.text)")
        #expect(response.headers["access-control-allow-origin"] == Self.app)
    }

    @Test("a preflight is 204 with the allowed methods and headers, and never reaches a handler", arguments: [
        "/database/1/{c}/development/private/records/modify?ckAPIToken={api}",
        "/database/1/{c}/development/private/no-such-operation?ckAPIToken={api}",
        "/database/1/no-such-container/development/private/records/modify?ckAPIToken={api}",
        "/auth/1/{c}/signin?ckAPIToken={api}",
    ])
    func preflight(_ template: String) throws {
        let world = try Self.world()
        let server = world.server
        let path = template.replacingOccurrences(of: "{api}", with: world.encodedToken).replacingOccurrences(of: "{c}", with: TestServer.container)
        let headers = ["Origin": Self.app, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"]
        let response = try server.request("OPTIONS", server.baseURL + path, token: .some(nil), headers: headers)
        #expect(response.status == 204, "\(template): \(response.status) \(response.text)")
        #expect(response.body.isEmpty)
        let allowsThisOrigin = !template.contains("no-such-container")
        #expect(response.headers["access-control-allow-origin"] == (allowsThisOrigin ? Self.app : nil), "\(response.headers)")
        #expect(response.headers["access-control-allow-methods"] == "GET, POST")
        let allowed = (response.headers["access-control-allow-headers"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for header in ["content-type", "range", "x-apple-cloudkit-request-keyid", "x-apple-cloudkit-request-iso8601date",
                       "x-apple-cloudkit-request-signaturev1"] {
            #expect(allowed.contains(header), "\(header) in \(allowed)")
        }
        #expect(response.headers["access-control-max-age"] == "600")
        // From another origin the preflight names no origin, so the browser sends nothing.
        let foreign = try server.request("OPTIONS", server.baseURL + path, token: .some(nil),
                                         headers: headers.merging(["Origin": "http://127.0.0.1:4999"]) { $1 })
        #expect(foreign.status == 204 && foreign.headers["access-control-allow-origin"] == nil, "\(foreign.headers)")
    }

    @Test("an asset upload from a page: the preflight and the Blob POST are readable by any origin, so is the signed downloadURL")
    func assetUploadAndDownload() throws {
        let world = try Self.world()
        let server = world.server
        let credentials = "?ckAPIToken=\(world.encodedToken)&ckWebAuthToken=" + server.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let tokens = try server.request("POST", server.databaseURL("assets/upload") + credentials,
                                        body: Data(JSONWriter.bytes(["tokens": [["recordType": "Photo", "fieldName": "photo"]]])),
                                        token: .some(nil), headers: ["Origin": Self.app, "Content-Type": "text/plain"])
        #expect(tokens.headers["access-control-allow-origin"] == Self.app)
        let upload = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue, "\(tokens.text)")
        let preflight = try server.request("OPTIONS", upload, token: .some(nil),
                                           headers: ["Origin": Self.app, "Access-Control-Request-Method": "POST"])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "*", "\(preflight.headers)")
        let bytes = Data("cross-origin bytes".utf8)
        let uploaded = try server.request("POST", upload, body: bytes, token: .some(nil),
                                          headers: ["Origin": Self.app, "Content-Type": "application/octet-stream"])
        #expect(uploaded.status == 200 && uploaded.headers["access-control-allow-origin"] == "*", "\(uploaded.text)")
        let receipt = try #require(uploaded.json["singleFile"])
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("cors"), recordType: "Photo",
                                                                                   fields: ["photo": Body.field(receipt, "ASSET")])]))
        let download = try #require(saved.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(saved.text)")
        let fetched = try server.request("GET", download, token: .some(nil), headers: ["Origin": "https://anywhere.example"])
        #expect(fetched.body == bytes && fetched.headers["access-control-allow-origin"] == "*", "\(fetched.headers)")
    }
}
