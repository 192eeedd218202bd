import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Containers with their environments, API tokens and server-to-server keys. Changes go through
/// `Admin.createContainer`, `AccountAdmin.createAPIToken`/`revokeAPIToken` and
/// `ServerKeyAdmin.revoke`, as `tandem container create`, `tandem token …` and `tandem key revoke` do.
/// An account that is not an administrator sees the containers' IDs and, in each, links to its
/// own data and shares; creating containers, tokens, keys and schemas is refused (`403`, C50).
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
            try visit.requireAdmin()
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
        case (_, 3...4) where ["subscriptions", "webhooks", "connections"].contains(segments[1]):
            try visit.requireAdmin()
            return try push(visit, container: segments[0], environment: segments[2], page: segments[1], action: segments.count == 4 ? segments[3] : nil)
        case (_, 3...4) where segments[1] == "sharedwithyou":
            try visit.requireAdmin()
            return try sharedWithYou(visit, container: segments[0], environment: segments[2], action: segments.count == 4 ? segments[3] : nil)
        case (_, 3...) where segments[1] == "schema":
            try visit.requireAdmin()
            return try schema(visit, container: segments[0], rest: Array(segments.dropFirst(2)))
        case ("GET", 1):
            return try containerPage(visit, segments[0], notice: visit.fields["done"].flatMap { Self.notices[$0] }, created: createdSecret(visit, segments[0]))
        case ("POST", 2) where segments[1] == "tokens":
            try visit.requireAdmin()
            return try createToken(visit, segments[0])
        case ("POST", 3) where segments[1] == "tokens" && segments[2] == "revoke":
            try visit.requireAdmin()
            try AccountAdmin.revokeAPIToken(container: segments[0], id: visit.fields["token"] ?? "", store: services.store)
            services.authenticator.revoked()
            return redirect("/console/containers/\(ConsoleHTML.percent(segments[0]))?done=token-revoked")
        case ("POST", 3) where segments[1] == "keys" && segments[2] == "revoke":
            try visit.requireAdmin()
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
        guard visit.isAdmin else { return memberContainerList(visit, all.map(\.id)) }
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

    /// The containers' IDs, for an account that is not an administrator: nothing else about them
    /// (zone counts are other people's), each leading to the account's own data (C50).
    private func memberContainerList(_ visit: Visit, _ ids: [String]) -> HTTPResponse {
        let rows = ids.map { id in
            ["<a href=\"/console/containers/\(ConsoleHTML.escape(ConsoleHTML.percent(id)))\">\(ConsoleHTML.escape(id))</a>"]
        }
        let body = """
            <p class="hint" id="member-note">You are signed in as \(ConsoleHTML.escape(visit.name)), who is not a server administrator: the console shows your own records, shares and sessions.</p>
            \(ConsoleHTML.table(id: "containers", caption: "Containers on this server", headers: ["Container"], rows: rows, empty: "No containers yet."))
            """
        return page(ConsoleHTML.page(title: "Containers", csrf: visit.csrf, admin: false, current: "containers", body: body), status: 200)
    }

    /// The secret a token's POST left for this page (`?created=token`), shown once (C52); the
    /// empty string when it was shown already or expired.
    private func createdSecret(_ visit: Visit, _ id: String) -> String? {
        guard visit.fields["created"] == "token" else { return nil }
        return flash.take(session: visit.tokenHash, container: id) ?? ""
    }

    private func containerPage(_ visit: Visit, _ id: String, notice: String? = nil, created: String? = nil, error: String? = nil,
                               origins: String = "", callback: String = "", status: Int = 200) throws -> HTTPResponse {
        guard let container = try services.store.read({ try $0.containers() }).first(where: { $0.id == id }) else {
            throw CloudKitError(.notFound, "no container '\(id)'")
        }
        guard visit.isAdmin else { return memberContainerPage(visit, id) }
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
            token.isEmpty ? """
                <p class="notice" role="status" id="created-gone">The new API token was shown once and is not shown again. If you did not copy it, revoke it below and create another.</p>
                """ : """
                <div class="created" role="status" id="created-token"><p>The new API token. It is shown once: copy it now.</p>
                <p><code class="wrap" id="new-token">\(ConsoleHTML.escape(token))</code></p></div>
                """
        } ?? ""
        let body = """
            \(ConsoleHTML.notice(notice))
            \(createdBox)
            <h2>Environments</h2>
            <ul id="environments"><li>development: \(container.zones["development"] ?? 0) zones · <a id="schema-development" href="/console/containers/\(escapedID)/schema/development">schema</a> · <a id="shares-development" href="/console/containers/\(escapedID)/shares/development">shares</a> · <a id="data-development" href="/console/containers/\(escapedID)/data/development">data</a> · <a id="subscriptions-development" href="/console/containers/\(escapedID)/subscriptions/development">subscriptions</a> · <a id="sharedwithyou-development" href="/console/containers/\(escapedID)/sharedwithyou/development">Shared with You</a></li>
            <li>production: \(container.zones["production"] ?? 0) zones · <a id="schema-production" href="/console/containers/\(escapedID)/schema/production">schema</a> · <a id="shares-production" href="/console/containers/\(escapedID)/shares/production">shares</a> · <a id="data-production" href="/console/containers/\(escapedID)/data/production">data</a> · <a id="subscriptions-production" href="/console/containers/\(escapedID)/subscriptions/production">subscriptions</a> · <a id="sharedwithyou-production" href="/console/containers/\(escapedID)/sharedwithyou/production">Shared with You</a></li></ul>
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

    /// A container's page for an account that is not an administrator: its own data and shares
    /// in each environment (C50).
    private func memberContainerPage(_ visit: Visit, _ id: String) -> HTTPResponse {
        let escapedID = ConsoleHTML.percent(id)
        let items = Environment.allCases.map { environment in
            let name = environment.rawValue
            return "<li>\(name): <a id=\"data-\(name)\" href=\"/console/containers/\(escapedID)/data/\(name)\">your data</a> · <a id=\"shares-\(name)\" href=\"/console/containers/\(escapedID)/shares/\(name)\">your shares</a></li>"
        }.joined(separator: "\n")
        let body = """
            <h2>Environments</h2>
            <ul id="environments">\(items)</ul>
            """
        return page(ConsoleHTML.page(title: id, csrf: visit.csrf, admin: false, current: "containers", body: body), status: 200)
    }

    /// The container environment's shares, newest first (decisions C11); each links to its page
    /// in the console, where an administrator acts for the owner (C17).
    private func sharesPage(_ visit: Visit, container: String, environment name: String) throws -> HTTPResponse {
        guard let environment = Environment(rawValue: name) else { throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'") }
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        guard visit.isAdmin else { return try ownShares(visit, container: container, environment: environment) }
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

    /// The shares the signed-in account owns in the container environment, newest first: read
    /// from its own zones (`privateZones`, as account removal counts them), so no one else's share
    /// is read (C50).
    private func ownShares(_ visit: Visit, container: String, environment: Environment) throws -> HTTPResponse {
        let shares = try services.store.read { reader in
            try reader.privateZones(owner: visit.user.recordName).filter { $0.container == container && $0.environment == environment }
                .flatMap { try reader.shares(zone: $0.zone) }
        }.sorted { $0.createdAt > $1.createdAt }
        let rows = shares.map { share -> [String] in
            ["<a href=\"/console/shares/\(ConsoleHTML.escape(share.shortGUID))\">\(ConsoleHTML.escape(share.shortGUID))</a>",
             ConsoleHTML.escape(share.zone.zoneID.zoneName), ConsoleHTML.escape(share.rootRecordName ?? "the whole zone"),
             ConsoleHTML.escape(share.publicPermission.rawValue), share.allowsAccessRequests ? "on" : "off", ConsoleHTML.time(share.createdAt)]
        }
        let body = """
            <p><a href="/console/containers/\(ConsoleHTML.percent(container))">\(ConsoleHTML.escape(container))</a></p>
            \(ConsoleHTML.table(id: "shares", caption: "Your shares in \(environment.rawValue)",
                                headers: ["Share", "Zone", "Root record", "Public permission", "Access requests", "Created"],
                                rows: rows, empty: "You share nothing in this environment."))
            """
        return page(ConsoleHTML.page(title: "\(container) · your \(environment.rawValue) shares", csrf: visit.csrf, admin: false, current: "containers", body: body),
                    status: 200)
    }

    private func createToken(_ visit: Visit, _ id: String) throws -> HTTPResponse {
        let originsText = visit.fields["origins"] ?? ""
        let origins = originsText.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" || $0 == "\r" }).map(String.init)
        let callbackText = (visit.fields["callback"] ?? "").trimmingCharacters(in: .whitespaces)
        do {
            let token = try AccountAdmin.createAPIToken(container: id, origins: origins, callback: callbackText.isEmpty ? nil : callbackText, store: services.store)
            // Post, redirect, get: a reload of the page shows it again and makes no second token (C52).
            flash.put(session: visit.tokenHash, container: id, secret: token)
            return redirect("/console/containers/\(ConsoleHTML.percent(id))?created=token")
        } catch let error as CloudKitError where error.code == .badRequest {
            return try containerPage(visit, id, error: error.reason, origins: originsText, callback: callbackText, status: 400)
        }
    }
}
