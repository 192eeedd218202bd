import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Accounts: search, a person's containers, sign-in methods, sessions and subscriptions; revoke sessions, mark
/// the email verified, remove the account after a confirmation step. Changes go through
/// `AccountAdmin` (as `tandem token revoke`, `tandem user verify`) and `AccountDeletion` (as
/// the self-service deletion, A15), and empty the server's token caches so they apply at once.
extension ConsolePage {
    static let searchLimit = 100

    func users(_ visit: Visit, segments: [String]) throws -> HTTPResponse {
        let method = visit.context.request.head.method
        switch (method, segments.count) {
        case ("GET", 0):
            return try userList(visit)
        case ("GET", 1):
            return try userPage(visit, segments[0], notice: visit.fields["done"].flatMap { Self.notices[$0] })
        case ("POST", 3) where segments[1] == "sessions" && segments[2] == "revoke":
            let all = visit.fields["all"] == "yes"
            guard all || !(visit.fields["session"] ?? "").isEmpty else { throw CloudKitError.badRequest("name a session, or all") }
            _ = try AccountAdmin.revoke(segments[0], session: all ? nil : visit.fields["session"], store: services.store)
            services.authenticator.revoked()
            return redirect("/console/users/\(ConsoleHTML.percent(segments[0]))?done=sessions-revoked")
        case ("POST", 2) where segments[1] == "verify":
            let profile = try AccountAdmin.show(segments[0], store: services.store).profile
            guard let email = profile.email else { throw CloudKitError.badRequest("this account has no email to verify") }
            _ = try AccountAdmin.verify(email, store: services.store)
            return redirect("/console/users/\(ConsoleHTML.percent(segments[0]))?done=verified")
        case ("GET", 2) where segments[1] == "remove":
            return try removalPage(visit, segments[0], error: nil, status: 200)
        case ("POST", 2) where segments[1] == "remove":
            return try remove(visit, segments[0])
        case ("GET", _), ("POST", _):
            throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default:
            throw MethodNotAllowed(allowed: "GET, POST")
        }
    }

    private func userList(_ visit: Visit) throws -> HTTPResponse {
        let query = (visit.fields["q"] ?? "").trimmingCharacters(in: .whitespaces)
        let found = try services.store.read { try $0.searchProfiles(String(query.prefix(200)), limit: Self.searchLimit) }
        let rows = found.map { profile -> [String] in
            ["<a href=\"/console/users/\(ConsoleHTML.escape(profile.recordName))\">\(ConsoleHTML.escape(profile.email ?? profile.recordName))</a>",
             ConsoleHTML.escape(profile.displayName ?? "—"), profile.emailVerified ? "verified" : "unverified", ConsoleHTML.time(profile.createdAt)]
        }
        let body = """
            <form method="get" action="/console/users" id="search" role="search">
            \(ConsoleHTML.field("Search by email or name", name: "q", type: "search", value: query, autocomplete: "off"))
            <button type="submit" id="search-submit">Search</button></form>
            \(ConsoleHTML.table(id: "users", caption: query.isEmpty ? "Accounts (first \(Self.searchLimit))" : "Accounts matching “\(query)”",
                                headers: ["Email", "Name", "Email status", "Created"], rows: rows, empty: "No account matches."))
            """
        return page(ConsoleHTML.page(title: "Users", csrf: visit.csrf, current: "users", body: body), status: 200)
    }

    private func userPage(_ visit: Visit, _ key: String, notice: String?) throws -> HTTPResponse {
        let (profile, _, sessions) = try AccountAdmin.show(key, store: services.store)
        let (methods, consents, admin, subscriptions) = try services.store.read { reader in
            (try reader.signInMethods(user: profile.recordName), try reader.consents(user: profile.recordName),
             try reader.isServerAdmin(user: profile.recordName), try reader.subscriptions(owner: profile.recordName, limit: Self.searchLimit))
        }
        let base = "/console/users/\(ConsoleHTML.percent(profile.recordName))"
        let consentLinks = consents.map { container in
            // Their private data, as the data browser shows it acting as them (C20).
            let data = "/console/containers/\(ConsoleHTML.percent(container))/data/development?database=private&amp;user=\(ConsoleHTML.percent(profile.recordName))"
            return "<a href=\"/console/containers/\(ConsoleHTML.percent(container))\">\(ConsoleHTML.escape(container))</a> (<a href=\"\(data)\">private data</a>)"
        }.joined(separator: ", ")
        let methodRows = methods.map { method in
            [ConsoleHTML.escape(method.kind), ConsoleHTML.time(method.createdAt), ConsoleHTML.time(method.lastUsedAt)]
        }
        let verify = profile.emailVerified || profile.email == nil ? ""
            : ConsoleHTML.form(action: base + "/verify", csrf: visit.csrf, id: "verify", inline: true, fields: "", button: "Mark email verified")
        let revokeAll = sessions.isEmpty ? ""
            : ConsoleHTML.form(action: base + "/sessions/revoke", csrf: visit.csrf, id: "revoke-all", inline: true,
                               fields: ConsoleHTML.hidden("all", "yes"), button: "Revoke all sessions", danger: true)
        let body = """
            \(ConsoleHTML.notice(notice))
            <dl id="profile">
            <dt>User record name</dt><dd><code>\(ConsoleHTML.escape(profile.recordName))</code></dd>
            <dt>Email</dt><dd id="email">\(ConsoleHTML.escape(profile.email ?? "—")) (<span id="email-status">\(profile.emailVerified ? "verified" : "unverified")</span>)</dd>
            <dt>Name</dt><dd>\(ConsoleHTML.escape(profile.displayName ?? "—"))</dd>
            <dt>Created</dt><dd>\(ConsoleHTML.time(profile.createdAt))</dd>
            <dt>Server administrator</dt><dd id="admin">\(admin ? "yes" : "no")</dd>
            <dt>Containers</dt><dd id="consents">\(consents.isEmpty ? "none" : consentLinks)</dd>
            </dl>
            <p class="actions">\(verify)</p>
            <h2>Sign-in methods</h2>
            \(ConsoleHTML.table(id: "methods", caption: "Sign-in methods", headers: ["Kind", "Added", "Last used"], rows: methodRows, empty: "No sign-in method (the account uses tokens made with the CLI)."))
            <h2>Sessions</h2>
            \(sessionTable(visit, sessions, revokeAction: base + "/sessions/revoke"))
            <p class="actions">\(revokeAll)</p>
            <h2>Subscriptions</h2>
            \(subscriptionTable(subscriptions, ownPage: visit.user.recordName == profile.recordName))
            <h2>Remove the account</h2>
            <p><a id="remove-link" class="danger" href="\(base)/remove">Remove this account…</a></p>
            """
        return page(ConsoleHTML.page(title: profile.email ?? profile.recordName, csrf: visit.csrf, current: "users", body: body), status: 200)
    }

    /// The confirmation step: says what goes, and asks for the account's email (or record name) typed out.
    private func removalPage(_ visit: Visit, _ key: String, error: String?, status: Int) throws -> HTTPResponse {
        let (profile, _, sessions) = try AccountAdmin.show(key, store: services.store)
        let name = profile.email ?? profile.recordName
        // What goes, counted as the deletion (A15) will find it.
        let (zones, records, participations) = try services.store.read { reader in
            let zones = try reader.privateZones(owner: profile.recordName)
            return (zones.count, try zones.reduce(0) { $0 + (try reader.recordCount(zone: $1.zone)) }, try reader.participations(user: profile.recordName).count)
        }
        func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
        let body = """
            <ul id="remove-counts"><li id="goes-zones">\(count(zones, "private zone", "private zones"))</li><li id="goes-records">\(count(records, "record in them", "records in them"))</li>
            <li id="goes-participations">\(count(participations, "participation in others' shares", "participations in others' shares"))</li><li id="goes-sessions">\(count(sessions.count, "session", "sessions"))</li></ul>
            <p id="remove-warning">Removing <strong>\(ConsoleHTML.escape(name))</strong> deletes the account's private zones and records in every container,
            ends its shares and participations, and revokes its sessions. Records it wrote in others' zones and in public databases stay. This cannot be undone.</p>
            \(ConsoleHTML.form(action: "/console/users/\(ConsoleHTML.percent(profile.recordName))/remove", csrf: visit.csrf, id: "remove", fields: """
                \(ConsoleHTML.field("Type \(name) to confirm", name: "confirm", required: true, autocomplete: "off", error: error))
                """, button: "Remove account", danger: true))
            <p><a href="/console/users/\(ConsoleHTML.escape(profile.recordName))">Cancel</a></p>
            """
        return page(ConsoleHTML.page(title: "Remove \(name)?", csrf: visit.csrf, current: "users", body: body), status: status)
    }

    private func remove(_ visit: Visit, _ key: String) throws -> HTTPResponse {
        let profile = try AccountAdmin.show(key, store: services.store).profile
        let name = profile.email ?? profile.recordName
        guard (visit.fields["confirm"] ?? "").trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() else {
            return try removalPage(visit, key, error: "Type \(name) exactly to confirm.", status: 400)
        }
        let report = try services.deletion.delete(user: profile.recordName)
        services.authenticator.revoked()
        log.message("console: \(visit.name) removed account \(profile.recordName): \(report.summary)")
        let body = """
            <p id="removed">The account \(ConsoleHTML.escape(name)) was removed.</p>
            <dl id="report">
            <dt>Zones deleted</dt><dd id="zones">\(report.zones)</dd>
            <dt>Records deleted</dt><dd id="records">\(report.records)</dd>
            <dt>Shares stopped</dt><dd id="shares">\(report.sharesStopped)</dd>
            <dt>Participations ended</dt><dd id="participations">\(report.participationsEnded)</dd>
            <dt>Sessions revoked</dt><dd id="sessions-revoked">\(report.sessionsRevoked)</dd>
            </dl>
            <p><a href="/console/users">Back to users</a></p>
            """
        return page(ConsoleHTML.page(title: "Account removed", csrf: visit.csrf, current: "users", body: body), status: 200)
    }
}
