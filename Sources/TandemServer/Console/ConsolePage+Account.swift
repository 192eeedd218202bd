import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The signed-in account's own page (decisions C51), for every console account: its sessions
/// (app web auth tokens and CLI tokens, as `tandem token list --user`) with revoke, and its
/// subscriptions. Revoking goes through `AccountAdmin.revoke` for the signed-in account only, so
/// a session ID of someone else's is `NOT_FOUND` and revokes nothing.
///
/// - `GET /console/account` — the page.
/// - `POST /console/account/sessions/revoke` — `session` (16 hex digits) or `all=yes`.
extension ConsolePage {
    func account(_ visit: Visit, segments: [String]) throws -> HTTPResponse {
        switch (visit.context.request.head.method, segments) {
        case ("GET", []):
            return try accountPage(visit)
        case ("POST", ["sessions", "revoke"]):
            let all = visit.fields["all"] == "yes"
            guard all || !(visit.fields["session"] ?? "").isEmpty else { throw CloudKitError.badRequest("name a session, or all") }
            _ = try AccountAdmin.revoke(visit.user.recordName, session: all ? nil : visit.fields["session"], store: services.store)
            services.authenticator.revoked()
            return redirect("/console/account?done=sessions-revoked")
        case ("GET", _), ("POST", _):
            throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default:
            throw MethodNotAllowed(allowed: "GET, POST")
        }
    }

    private func accountPage(_ visit: Visit) throws -> HTTPResponse {
        let (profile, _, sessions) = try AccountAdmin.show(visit.user.recordName, store: services.store)
        let subscriptions = try services.store.read { try $0.subscriptions(owner: profile.recordName, limit: Self.searchLimit) }
        let action = "/console/account/sessions/revoke"
        let revokeAll = sessions.isEmpty ? ""
            : ConsoleHTML.form(action: action, csrf: visit.csrf, id: "revoke-all", inline: true, fields: ConsoleHTML.hidden("all", "yes"),
                               button: "Revoke all sessions", danger: true)
        let body = """
            \(ConsoleHTML.notice(visit.fields["done"].flatMap { Self.notices[$0] }))
            <dl id="profile">
            <dt>Email</dt><dd id="email">\(ConsoleHTML.escape(profile.email ?? "—"))</dd>
            <dt>User record name</dt><dd><code>\(ConsoleHTML.escape(profile.recordName))</code></dd>
            <dt>Server administrator</dt><dd id="admin">\(visit.isAdmin ? "yes" : "no")</dd>
            </dl>
            <h2>Sessions</h2>
            <p class="hint">Where this account is signed in to apps. Revoking one signs that app out at its next request. The console's own session ends with Sign out.</p>
            \(sessionTable(visit, sessions, revokeAction: action))
            <p class="actions">\(revokeAll)</p>
            <h2>Subscriptions</h2>
            \(subscriptionTable(subscriptions, ownPage: true))
            """
        return page(ConsoleHTML.page(title: "Your account", csrf: visit.csrf, admin: visit.isAdmin, current: "account", body: body), status: 200)
    }

    /// An account's live sessions, each with a revoke form posting `session` to `revokeAction`
    /// (the user page's and the account page's one table).
    func sessionTable(_ visit: Visit, _ sessions: [StoredSession], revokeAction: String) -> String {
        let rows = sessions.map { session -> [String] in
            ["<code>\(session.id)</code>", ConsoleHTML.escape(session.container ?? "every container (CLI token)"),
             ConsoleHTML.escape(session.session.device ?? "—"), ConsoleHTML.time(session.createdAt),
             ConsoleHTML.time(session.session.lastUsedAt ?? session.createdAt),
             ConsoleHTML.form(action: revokeAction, csrf: visit.csrf, id: "revoke-session-\(session.id)", inline: true,
                              fields: ConsoleHTML.hidden("session", session.id), button: "Revoke", danger: true)]
        }
        return ConsoleHTML.table(id: "sessions", caption: "Sessions that are not revoked", headers: ["ID", "Container", "Device", "Created", "Last used", ""],
                                 rows: rows, empty: "No sessions.")
    }

    /// An account's subscriptions (decisions C11). A webhook shows its whole URL only on the
    /// account's own page (`ownPage`); elsewhere its `host[:port]`, as the subscriptions list
    /// shows it, since a URL's path may carry the receiver's secret (decisions C41, C62).
    func subscriptionTable(_ subscriptions: [StoredSubscription], ownPage: Bool) -> String {
        let rows = subscriptions.map { stored -> [String] in
            let subscription = stored.subscription
            let watches: String = switch subscription.kind {
            case .query: "records of type " + (subscription.query?.recordType ?? "?")
            case .zone: "zone " + (subscription.zoneID?.zoneName ?? "?")
            case .database: "the database"
            }
            return [ConsoleHTML.escape(stored.container), stored.environment.rawValue, stored.scope.rawValue, ConsoleHTML.escape(subscription.subscriptionID),
                    ConsoleHTML.escape(watches), ConsoleHTML.escape(subscription.webhookURL.map { ownPage ? $0 : "webhook to " + WebhookLog.host($0) } ?? "—")]
        }
        return ConsoleHTML.table(id: "subscriptions", caption: "Subscriptions", headers: ["Container", "Environment", "Database", "ID", "Watches", "Webhook"],
                                 rows: rows, empty: "No subscriptions.")
    }
}
