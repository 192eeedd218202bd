import Foundation
import TandemTestSupport
import TandemCore

/// Helpers for the Shared with You suites: conversations, messages and highlights over HTTP.
extension TestServer {
    var tandemBase: String { "\(baseURL)/tandem/1/\(TestServer.container)/development" }

    /// GET `/tandem/1/{container}/development/{operation}?query`.
    func tandemGet(_ operation: String, _ query: [String: String] = [:], as person: Person?) throws -> Response {
        let encoded = query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.value)" }
        return try request("GET", "\(tandemBase)/\(operation)" + (encoded.isEmpty ? "" : "?" + encoded.joined(separator: "&")), token: .some(person?.token))
    }

    /// Starts a conversation as `creator` with `members`; returns its ID.
    func conversation(_ creator: Person, with members: [Person], group: Bool? = nil, title: String? = nil) throws -> String {
        var body: JSONObject = ["members": .array(members.map { .string($0.recordName) })]
        if let group { body["group"] = .bool(group) }
        if let title { body["title"] = .string(title) }
        let response = try tandem("conversations/create", .object(body), as: creator)
        guard response.status == 200, let id = response.json["conversationID"]?.stringValue else { throw TestFailure("create: \(response.text)") }
        return id
    }

    /// Sends a message; returns the response.
    @discardableResult
    func say(_ text: String, in conversation: String, as sender: Person, links: [JSONValue] = []) throws -> Response {
        var body: JSONObject = ["conversation": .string(conversation), "text": .string(text)]
        if !links.isEmpty { body["links"] = .array(links) }
        let response = try tandem("conversations/messages/send", .object(body), as: sender)
        guard response.status == 200 else { throw TestFailure("send: \(response.text)") }
        return response
    }

    func addContacts(_ owner: Person, _ contacts: [Person]) throws {
        let response = try tandem("conversations/contacts/modify", ["add": .array(contacts.map { .string($0.email) })], as: owner)
        guard response.status == 200 else { throw TestFailure("contacts: \(response.text)") }
    }

    /// The highlight URLs of `person` for `app`, in order, and the authorization state.
    func highlights(_ person: Person, app: String) throws -> (authorization: String, urls: [String], json: [JSONValue]) {
        let response = try tandemGet("highlights/list", ["app": app], as: person)
        guard response.status == 200 else { throw TestFailure("highlights: \(response.text)") }
        let list = response.json["highlights"]?.arrayValue ?? []
        return (response.json["authorization"]?.stringValue ?? "", list.compactMap { $0["url"]?.stringValue }, list)
    }

    /// Registers `app` for `domain` with an association file opening `paths` (components).
    func registerApp(_ app: String, domain: String, components: String = #"[{"/": "/*"}]"#) throws {
        let added = try runTandem(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)", "--data", dataDirectory])
        guard added.status == 0 else { throw TestFailure("app add: \(added.error)") }
        let path = NSTemporaryDirectory() + "aasa-" + UUID().uuidString
        ExitCleanup.removeAtExit(path)
        try Data(#"{"applinks": {"details": [{"appIDs": ["\#(app)"], "components": \#(components)}]}}"#.utf8).write(to: URL(fileURLWithPath: path))
        let uploaded = try runTandem(["links", "upload", domain, path, "--container", TestServer.container, "--data", dataDirectory])
        guard uploaded.status == 0 else { throw TestFailure("links upload: \(uploaded.error)") }
    }
}

/// A fresh app ID and domain.
func appNames() -> (app: String, domain: String) {
    let tag = UUID().uuidString.prefix(8).lowercased()
    return ("ABCDE12345.com.example.\(tag)", "\(tag).example.com")
}

/// Polls `body` until it returns true or `seconds` pass.
func eventually(seconds: Double = 5, _ body: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try body() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return try body()
}
