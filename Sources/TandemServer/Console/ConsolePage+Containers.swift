import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Containers with their environments, API tokens and server-to-server keys. Changes go through
/// `Admin.createContainer`, `AccountAdmin.createAPIToken`/`revokeAPIToken` and
/// `ServerKeyAdmin.revoke`, as `tandem container create`, `tandem token …` and `tandem key revoke` do.
extension ConsolePage {
    /// Messages a redirect may ask a page to show (`?done=KEY`); only these, so a link cannot put
    /// words on the page.
    static let notices = [
        "token-revoked": "The API token was revoked.", "key-revoked": "The server-to-server key was revoked.",
        "sessions-revoked": "Sessions revoked.", "verified": "The email is marked verified.",
    ]

    func containers(_ visit: Visit, segments: [String]) throws -> HTTPResponse {
        let method = visit.context.request.head.method
        switch (method, segments.count) {
        case ("GET", 0):
            return try containerList(visit, error: nil, id: "", status: 200)
        case ("POST", 0):
            let id = (visit.fields["id"] ?? "").trimmingCharacters(in: .whitespaces)
            do {
                _ = try Admin.createContainer(id, store: services.store)
            } catch let error as CloudKitError where error.code == .badRequest {
                return try containerList(visit, error: error.reason, id: id, status: 400)
            }
            return redirect("/console/containers/" + ConsoleHTML.percent(id))
        case ("GET", 3) where segments[1] == "shares":
            return try sharesPage(visit, container: segments[0], environment: segments[2])
        case (_, 3...) where segments[1] == "data":
            return try data(visit, container: segments[0], environment: segments[2], rest: Array(segments.dropFirst(3)))
        case (_, 3...) where segments[1] == "schema":
            return try schema(visit, container: segments[0], rest: Array(segments.dropFirst(2)))
        case ("GET", 1):
            return try containerPage(visit, segments[0], notice: visit.fields["done"].flatMap { Self.notices[$0] })
        case ("POST", 2) where segments[1] == "tokens":
            return try createToken(visit, segments[0])
        case ("POST", 3) where segments[1] == "tokens" && segments[2] == "revoke":
            try AccountAdmin.revokeAPIToken(container: segments[0], id: visit.fields["token"] ?? "", store: services.store)
            services.authenticator.revoked()
            return redirect("/console/containers/\(ConsoleHTML.percent(segments[0]))?done=token-revoked")
        case ("POST", 3) where segments[1] == "keys" && segments[2] == "revoke":
            guard try ServerKeyAdmin.list(container: segments[0], store: services.store).contains(where: { $0.keyID == visit.fields["key"] }) else {
                throw CloudKitError(.notFound, "no server-to-server key '\(visit.fields["key"] ?? "")' in container '\(segments[0])'")
            }
            try ServerKeyAdmin.revoke(visit.fields["key"] ?? "", store: services.store)
            return redirect("/console/containers/\(ConsoleHTML.percent(segments[0]))?done=key-revoked")
        case ("GET", _), ("POST", _):
            throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default:
            throw MethodNotAllowed(allowed: "GET, POST")
        }
    }

    private func containerList(_ visit: Visit, error: String?, id: String, status: Int) throws -> HTTPResponse {
        let all = try services.store.read { try $0.containers() }
        let rows = all.map { container -> [String] in
            let link = "<a href=\"/console/containers/\(ConsoleHTML.escape(ConsoleHTML.percent(container.id)))\">\(ConsoleHTML.escape(container.id))</a>"
            return [link, "\(container.zones["development"] ?? 0)", "\(container.zones["production"] ?? 0)", ConsoleHTML.time(container.createdAt)]
        }
        let body = """
            \(ConsoleHTML.table(id: "containers", caption: "Containers and the zones in each environment", headers: ["Container", "Development zones", "Production zones", "Created"],
                                rows: rows, empty: "No containers yet. Create the first one below."))
            <h2>Create a container</h2>
            \(ConsoleHTML.form(action: "/console/containers", csrf: visit.csrf, id: "create-container", fields: """
                \(ConsoleHTML.field("Container ID", name: "id", value: id, required: true, autocomplete: "off", placeholder: "iCloud.com.example.app",
                                    error: error, hint: "Letters, digits, '.', '-' and '_'. Both environments, development and production, come with it."))
                """, button: "Create container"))
            """
        return page(ConsoleHTML.page(title: "Containers", csrf: visit.csrf, current: "containers", body: body), status: status)
    }

    private func containerPage(_ visit: Visit, _ id: String, notice: String? = nil, created: String? = nil, error: String? = nil,
                               origins: String = "", callback: String = "", status: Int = 200) throws -> HTTPResponse {
        guard let container = try services.store.read({ try $0.containers() }).first(where: { $0.id == id }) else {
            throw CloudKitError(.notFound, "no container '\(id)'")
        }
        let tokens = try AccountAdmin.apiTokens(container: id, store: services.store)
        let keys = try ServerKeyAdmin.list(container: id, store: services.store)
        let escapedID = ConsoleHTML.percent(id)
        let tokenRows = tokens.map { token -> [String] in
            let action = token.revokedAt == nil
                ? ConsoleHTML.form(action: "/console/containers/\(escapedID)/tokens/revoke", csrf: visit.csrf, id: "revoke-token-\(token.id)", inline: true,
                                   fields: ConsoleHTML.hidden("token", token.id), button: "Revoke", danger: true)
                : "revoked \(ConsoleHTML.time(token.revokedAt))"
            return ["<code>\(token.id)</code>", ConsoleHTML.escape(token.origins.isEmpty ? "none" : token.origins.joined(separator: " ")),
                    ConsoleHTML.escape(token.callback ?? "message"), ConsoleHTML.time(token.createdAt), action]
        }
        let keyRows = keys.map { key -> [String] in
            let action = key.revokedAt == nil
                ? ConsoleHTML.form(action: "/console/containers/\(escapedID)/keys/revoke", csrf: visit.csrf, id: "revoke-key-\(key.keyID.prefix(16))", inline: true,
                                   fields: ConsoleHTML.hidden("key", key.keyID), button: "Revoke", danger: true)
                : "revoked \(ConsoleHTML.time(key.revokedAt))"
            return ["<code class=\"wrap\">\(key.keyID)</code>", "<a href=\"/console/users/\(ConsoleHTML.escape(key.userRecordName))\">\(ConsoleHTML.escape(key.userRecordName))</a>",
                    ConsoleHTML.time(key.createdAt), action]
        }
        let createdBox = created.map { token in
            """
            <div class="created" role="status" id="created-token"><p>The new API token. It is shown once: copy it now.</p>
            <p><code class="wrap" id="new-token">\(ConsoleHTML.escape(token))</code></p></div>
            """
        } ?? ""
        let body = """
            \(ConsoleHTML.notice(notice))
            \(createdBox)
            <h2>Environments</h2>
            <ul id="environments"><li>development: \(container.zones["development"] ?? 0) zones · <a id="schema-development" href="/console/containers/\(escapedID)/schema/development">schema</a> · <a id="shares-development" href="/console/containers/\(escapedID)/shares/development">shares</a> · <a id="data-development" href="/console/containers/\(escapedID)/data/development">data</a></li>
            <li>production: \(container.zones["production"] ?? 0) zones · <a id="schema-production" href="/console/containers/\(escapedID)/schema/production">schema</a> · <a id="shares-production" href="/console/containers/\(escapedID)/shares/production">shares</a> · <a id="data-production" href="/console/containers/\(escapedID)/data/production">data</a></li></ul>
            <h2>API tokens</h2>
            \(ConsoleHTML.table(id: "api-tokens", caption: "API tokens (ckAPIToken) of \(id)", headers: ["ID", "Allowed origins", "Sign-in callback", "Created", ""],
                                rows: tokenRows, empty: "No API tokens yet."))
            <h3>Create an API token</h3>
            \(ConsoleHTML.form(action: "/console/containers/\(escapedID)/tokens", csrf: visit.csrf, id: "create-token", fields: """
                \(ConsoleHTML.field("Allowed origins", name: "origins", value: origins, autocomplete: "off", placeholder: "https://app.example",
                                    error: error?.contains("callback") == false ? error : nil, hint: "Where the app runs, scheme://host[:port]; several separated by spaces or commas. The sign-in page hands sessions only to these."))
                \(ConsoleHTML.field("Sign-in callback", name: "callback", value: callback, autocomplete: "off", placeholder: "message",
                                    error: error?.contains("callback") == true ? error : nil, hint: "'message' (a popup posts to the opener) or a URL on one of the origins to redirect to."))
                """, button: "Create API token"))
            <h2>Server-to-server keys</h2>
            \(ConsoleHTML.table(id: "server-keys", caption: "Server-to-server keys of \(id)", headers: ["Key ID", "Acts as", "Created", ""],
                                rows: keyRows, empty: "No server-to-server keys. Add one with: tandem key add --container \(id) --user EMAIL --public-key pub.pem"))
            """
        return page(ConsoleHTML.page(title: id, csrf: visit.csrf, current: "containers", body: body), status: status)
    }

    /// The container environment's shares, newest first (decisions C11); each links to its page
    /// in the console, where an administrator acts for the owner (C17).
    private func sharesPage(_ visit: Visit, container: String, environment name: String) throws -> HTTPResponse {
        guard let environment = Environment(rawValue: name) else { throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'") }
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let shares = try services.store.read { try $0.shareSummaries(container: container, environment: environment.rawValue, limit: 200) }
        let rows = shares.map { share -> [String] in
            ["<a href=\"/console/shares/\(ConsoleHTML.escape(share.shortGUID))\">\(ConsoleHTML.escape(share.shortGUID))</a>",
             "<a href=\"/console/users/\(ConsoleHTML.escape(share.owner))\">\(ConsoleHTML.escape(share.ownerEmail ?? share.owner))</a>",
             ConsoleHTML.escape(share.zoneName), ConsoleHTML.escape(share.rootName ?? "the whole zone"), ConsoleHTML.escape(share.publicPermission),
             "\(share.accepted)", "\(share.invited)", share.allowsAccessRequests ? "\(share.requests)" : "off", ConsoleHTML.time(share.createdAt)]
        }
        let body = """
            <p><a href="/console/containers/\(ConsoleHTML.percent(container))">\(ConsoleHTML.escape(container))</a></p>
            \(ConsoleHTML.table(id: "shares", caption: "Shares in \(environment.rawValue) (newest 200)",
                                headers: ["Share", "Owner", "Zone", "Root record", "Public permission", "Accepted", "Invited", "Access requests", "Created"],
                                rows: rows, empty: "No shares in this environment."))
            """
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) shares", csrf: visit.csrf, current: "containers", body: body), status: 200)
    }

    private func createToken(_ visit: Visit, _ id: String) throws -> HTTPResponse {
        let originsText = visit.fields["origins"] ?? ""
        let origins = originsText.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" || $0 == "\r" }).map(String.init)
        let callbackText = (visit.fields["callback"] ?? "").trimmingCharacters(in: .whitespaces)
        do {
            let token = try AccountAdmin.createAPIToken(container: id, origins: origins, callback: callbackText.isEmpty ? nil : callbackText, store: services.store)
            return try containerPage(visit, id, created: token)
        } catch let error as CloudKitError where error.code == .badRequest {
            return try containerPage(visit, id, error: error.reason, origins: originsText, callback: callbackText, status: 400)
        }
    }
}
