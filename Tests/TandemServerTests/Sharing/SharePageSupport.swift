import Foundation
import TandemCore
import TandemTestSupport

/// A browser's visit to a share page over a raw socket (no redirect followed): the session
/// cookie the sign-in page would have set (`tandem_share`, C13) holding `token`, and the CSRF
/// cookie and field the page gave.
struct SharePageVisit {
    var server: TestServer
    var guid: String
    /// The user token in the page's session cookie; nil for a signed-out visitor.
    var token: String?
    var csrfCookie: String?
    var csrf: String?
    /// Request headers a browser adds (`Sec-Fetch-Site`), as `Name: value` lines.
    var headers: [String] = []

    /// GETs the page (with `query`, e.g. `done=invite`) and keeps its CSRF pair.
    @discardableResult
    mutating func open(_ query: String = "") throws -> RawSocket.Reply {
        let reply = try send("GET", "/share/\(guid)" + (query.isEmpty ? "" : "?" + query), body: nil)
        if let set = Self.setCookies(reply).first(where: { $0.hasPrefix("tandem_csrf=") }) {
            csrfCookie = String(set.split(separator: ";")[0])
        }
        if let range = reply.body.range(of: #"name="csrf" value=""#) {
            csrf = String(reply.body[range.upperBound...].prefix(64))
        }
        return reply
    }

    /// GETs the share's thumbnail (`/share/{guid}/thumbnail`) with the visit's cookies.
    func thumbnail() throws -> RawSocket.Reply { try send("GET", "/share/\(guid)/thumbnail", body: nil) }

    /// POSTs a form to `/share/{guid}/{action}` with the page's CSRF field (unless `csrf` says
    /// otherwise: nil leaves it out).
    func post(_ action: String, _ fields: [String: String], csrf: String?? = .none) throws -> RawSocket.Reply {
        var all = fields
        let field: String? = switch csrf { case .none: self.csrf; case .some(let given): given }
        if let field { all["csrf"] = field }
        let body = all.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        return try send("POST", "/share/\(guid)/\(action)", body: body)
    }

    private func send(_ method: String, _ path: String, body: String?) throws -> RawSocket.Reply {
        var cookies: [String] = []
        if let token { cookies.append("tandem_share=\(token)") }
        if let csrfCookie { cookies.append(csrfCookie) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nConnection: close\r\n"
        if !cookies.isEmpty { head += "Cookie: \(cookies.joined(separator: "; "))\r\n" }
        head += headers.map { $0 + "\r\n" }.joined()
        if let body {
            head += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n"
        }
        let socket = try RawSocket(port: server.port)
        socket.send(head + "\r\n" + (body ?? ""))
        return socket.readUntilClosed(seconds: 30)
    }

    /// Every `Set-Cookie` value of a reply.
    static func setCookies(_ reply: RawSocket.Reply) -> [String] {
        let head = reply.text.components(separatedBy: "\r\n\r\n").first ?? ""
        return head.components(separatedBy: "\r\n").compactMap { line in
            line.lowercased().hasPrefix("set-cookie:") ? String(line.dropFirst("set-cookie:".count)).trimmingCharacters(in: .whitespaces) : nil
        }
    }

    /// What a POST came to: "ok" for the redirect back to the page, "signin" for the redirect to
    /// the sign-in page, else the page's `data-error-code` (or `HTTP n`).
    static func outcome(_ reply: RawSocket.Reply) -> String {
        if reply.status == 303, let location = reply.header("location") {
            if location.hasPrefix("/signin?") { return "signin" }
            if location.contains("?done=") { return "ok" }
            return "303 \(location)"
        }
        if let range = reply.body.range(of: #"data-error-code=""#) {
            return String(reply.body[range.upperBound...].prefix { $0 != "\"" })
        }
        return "HTTP \(reply.status ?? 0)"
    }
}
