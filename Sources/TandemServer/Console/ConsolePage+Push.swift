import Foundation
import Synchronization
import TandemCore
import TandemHTTP
import TandemStore

/// Subscriptions and push in one container environment (issue 18 item 6; decisions C40–C43):
///
/// - `GET /console/containers/{id}/subscriptions/{environment}?user=&database=` — every
///   subscription, narrowed to one account (email or user record name) and one database.
/// - `POST …/subscriptions/{environment}/delete` (`owner`, `database`, `subscription`) — deletes
///   one through `SubscriptionService.modify`, as `subscriptions/modify` would for its owner.
/// - `GET …/webhooks/{environment}?subscription=&user=` — the webhook delivery log (C42).
/// - `GET …/connections/{environment}` — stream WebSockets and long polls open now (C43).
extension ConsolePage {
    /// Subscriptions listed at most on one page.
    static let subscriptionPageLimit = 500

    static let pushNotices = ["subscription-deleted": "The subscription was deleted."]

    func push(_ visit: Visit, container: String, environment name: String, page kind: String, action: String?) throws -> HTTPResponse {
        guard let environment = Environment(rawValue: name) else { throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'") }
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let method = visit.context.request.head.method
        switch (method, kind, action) {
        case ("GET", "subscriptions", nil):
            return try subscriptionsPage(visit, container: container, environment: environment)
        case ("POST", "subscriptions", "delete"?):
            return try deleteSubscription(visit, container: container, environment: environment)
        case ("GET", "webhooks", nil):
            return try webhooksPage(visit, container: container, environment: environment)
        case ("GET", "connections", nil):
            return try connectionsPage(visit, container: container, environment: environment)
        case (_, "subscriptions", "delete"?):
            throw MethodNotAllowed(allowed: "POST")
        case ("GET", _, _), ("POST", _, _):
            throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default:
            throw MethodNotAllowed(allowed: "GET")
        }
    }

    private func base(_ kind: String, _ container: String, _ environment: Environment) -> String {
        "/console/containers/\(ConsoleHTML.percent(container))/\(kind)/\(environment.rawValue)"
    }

    /// Links between the push pages of one container environment.
    private func pushLinks(_ container: String, _ environment: Environment) -> String {
        """
        <p class="links"><a href="/console/containers/\(ConsoleHTML.percent(container))">\(ConsoleHTML.escape(container))</a> ·
        <a id="link-subscriptions" href="\(base("subscriptions", container, environment))">Subscriptions</a> ·
        <a id="link-webhooks" href="\(base("webhooks", container, environment))">Webhook deliveries</a> ·
        <a id="link-connections" href="\(base("connections", container, environment))">Open connections</a> ·
        <a id="link-sharedwithyou" href="\(base("sharedwithyou", container, environment))">Shared with You</a></p>
        """
    }

    /// An account named by email or user record name; nil for empty text, an error message for no one.
    private func account(_ text: String) throws -> (UserAccount?, String?) {
        guard !text.isEmpty else { return (nil, nil) }
        guard let found = try services.store.read({ try $0.user(recordNameOrEmail: text) }) else { return (nil, "no account '\(text)'") }
        return (found, nil)
    }

    // MARK: Subscriptions

    private func subscriptionsPage(_ visit: Visit, container: String, environment: Environment, error: String? = nil,
                                   status: Int = 200) throws -> HTTPResponse {
        let userText = (visit.fields["user"] ?? "").trimmingCharacters(in: .whitespaces)
        let databaseText = (visit.fields["database"] ?? "").trimmingCharacters(in: .whitespaces)
        var errors: [String: String] = [:]
        let (user, userError) = try account(userText)
        errors["user"] = userError
        let database = DatabaseType(rawValue: databaseText)
        if !databaseText.isEmpty && database == nil { errors["database"] = "the database is public, private or shared" }
        let subscriptions = errors.isEmpty
            ? try services.store.read { try $0.subscriptions(container: container, environment: environment, owner: user?.recordName,
                                                            scope: database, limit: Self.subscriptionPageLimit) }
            : []
        let emails = try services.store.read { reader in
            try Dictionary(Set(subscriptions.map(\.owner)).map { ($0, try reader.user(recordNameOrEmail: $0)?.email) }, uniquingKeysWith: { a, _ in a })
        }
        let streams = services.streams.clients(container: container, environment: environment.rawValue)
        let polls = services.webCourier.openPolls(container: container, environment: environment.rawValue)
        let deleteAction = base("subscriptions", container, environment) + "/delete"
        let rows = subscriptions.map { stored -> [String] in
            let subscription = stored.subscription
            let id = subscription.subscriptionID
            let owner = "<a href=\"/console/users/\(ConsoleHTML.escape(stored.owner))\">\(ConsoleHTML.escape((emails[stored.owner] ?? nil) ?? stored.owner))</a>"
            var what = subscription.kind.rawValue
            if let recordType = subscription.query?.recordType { what += " of " + recordType }
            let zone = subscription.zoneID.map { $0.zoneName + ($0.ownerRecordName.map { " (\($0))" } ?? "") } ?? "every zone"
            let firesOn = subscription.kind == .query
                ? Subscription.Event.allCases.filter(subscription.firesOn.contains).map(\.rawValue).joined(separator: ", ") + (subscription.firesOnce ? ", once" : "")
                : "any change"
            let info = subscription.notificationInfo.map { JSONWriter.string(.object($0)) } ?? "—"
            let delivery: String
            if let url = subscription.webhookURL {
                delivery = "webhook to \(ConsoleHTML.escape(WebhookLog.host(url))) · <a id=\"deliveries-\(stored.key)\" href=\"\(base("webhooks", container, environment))?subscription=\(ConsoleHTML.percent(id))&amp;user=\(ConsoleHTML.percent(stored.owner))\">deliveries</a>"
            } else {
                let open = streams.filter { $0.user == stored.owner }.count
                let waiting = polls.filter { $0.user == stored.owner }.count
                delivery = "stream (\(open) open), long poll (\(waiting) waiting)"
            }
            let form = ConsoleHTML.form(action: deleteAction, csrf: visit.csrf, id: "delete-\(stored.key)", inline: true, fields:
                ConsoleHTML.hidden("owner", stored.owner) + ConsoleHTML.hidden("database", stored.scope.rawValue) + ConsoleHTML.hidden("subscription", id)
                + ConsoleHTML.hidden("user", userText) + ConsoleHTML.hidden("filter", databaseText),
                button: "Delete", danger: true)
            return ["<code>\(ConsoleHTML.escape(id))</code>", owner, stored.scope.rawValue, ConsoleHTML.escape(what), ConsoleHTML.escape(zone),
                    ConsoleHTML.escape(firesOn), "<code class=\"wrap\">\(ConsoleHTML.escape(info))</code>", delivery, form]
        }
        let body = """
            \(pushLinks(container, environment))
            \(ConsoleHTML.notice(visit.fields["done"].flatMap { Self.pushNotices[$0] }))
            \(ConsoleHTML.error(error))
            <form method="get" action="\(base("subscriptions", container, environment))" id="subscription-filter" class="filters">
            \(ConsoleHTML.field("Account", name: "user", value: userText, autocomplete: "off", placeholder: "ada@example.com",
                                error: errors["user"], hint: "Email or user record name; empty for everyone."))
            \(ConsoleHTML.field("Database", name: "database", value: databaseText, autocomplete: "off", placeholder: "private",
                                error: errors["database"], hint: "public, private or shared; empty for all three."))
            <button type="submit" id="subscription-filter-submit">Filter</button></form>
            \(ConsoleHTML.table(id: "subscriptions", caption: "Subscriptions in \(environment.rawValue) (oldest \(Self.subscriptionPageLimit))",
                                headers: ["ID", "Owner", "Database", "Type", "Zone", "Fires on", "Notification info", "Delivery", ""],
                                rows: rows, empty: errors.isEmpty ? "No subscriptions here." : "Fix the filter to see subscriptions."))
            """
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) subscriptions", csrf: visit.csrf, current: "containers", body: body),
                    status: errors.isEmpty ? status : 400)
    }

    /// Deletes one subscription for its owner through the service `subscriptions/modify` uses;
    /// every field is checked first, so a refusal deletes nothing.
    private func deleteSubscription(_ visit: Visit, container: String, environment: Environment) throws -> HTTPResponse {
        let ownerText = (visit.fields["owner"] ?? "").trimmingCharacters(in: .whitespaces)
        let id = visit.fields["subscription"] ?? ""
        var again = visit
        again.fields = ["user": visit.fields["user"] ?? "", "database": visit.fields["filter"] ?? ""]
        guard let database = DatabaseType(rawValue: visit.fields["database"] ?? "") else {
            return try subscriptionsPage(again, container: container, environment: environment, error: "the database is public, private or shared", status: 400)
        }
        let (owner, ownerError) = try account(ownerText)
        guard let owner else {
            return try subscriptionsPage(again, container: container, environment: environment, error: ownerError ?? "name the subscription's owner", status: 400)
        }
        guard !id.isEmpty else {
            return try subscriptionsPage(again, container: container, environment: environment, error: "name the subscription to delete", status: 400)
        }
        let scope = RequestScope(database: DatabaseScope(container: container, environment: environment, database: database,
                                                         owner: database == .public ? DatabaseScope.publicOwner : owner.recordName),
                                 user: owner.recordName, deviceID: "console", baseURL: visit.context.baseURL)
        let results = try services.subscriptions.modify([.delete(id)], scope: scope)
        if case .failed(let error, _)? = results.first {
            return try subscriptionsPage(again, container: container, environment: environment, error: error.reason, status: error.code.httpStatus)
        }
        log.message("console: administrator \(visit.user.email ?? "") (\(visit.user.recordName)) deleted subscription \(id) of \(owner.recordName) in \(container) \(environment.rawValue) \(database.rawValue)")
        var query = "done=subscription-deleted"
        if let user = again.fields["user"], !user.isEmpty { query += "&user=" + ConsoleHTML.percent(user) }
        if let filter = again.fields["database"], !filter.isEmpty { query += "&database=" + ConsoleHTML.percent(filter) }
        return redirect(base("subscriptions", container, environment) + "?" + query)
    }

    // MARK: Webhook deliveries

    private func webhooksPage(_ visit: Visit, container: String, environment: Environment) throws -> HTTPResponse {
        let subscriptionText = (visit.fields["subscription"] ?? "").trimmingCharacters(in: .whitespaces)
        let userText = (visit.fields["user"] ?? "").trimmingCharacters(in: .whitespaces)
        let (user, userError) = try account(userText)
        let entries = userError == nil
            ? services.webhooks.attemptLog.entries(container: container, environment: environment.rawValue, owner: user?.recordName,
                                                   subscriptionID: subscriptionText.isEmpty ? nil : subscriptionText)
            : []
        let rows = entries.map { entry -> [String] in
            let answer = entry.status.map { "HTTP \($0)" } ?? (entry.failure ?? "no answer")
            return [ConsoleHTML.clock(entry.time), "<code>\(ConsoleHTML.escape(entry.subscriptionID))</code>",
                    "<a href=\"/console/users/\(ConsoleHTML.escape(entry.owner))\">\(ConsoleHTML.escape(entry.owner))</a>", ConsoleHTML.escape(entry.host),
                    "<span class=\"outcome-\(entry.outcome.rawValue)\">\(ConsoleHTML.escape(answer))</span>", "\(entry.milliseconds) ms",
                    "\(entry.attempt) of \(WebhookSender.attempts)", ConsoleHTML.escape(entry.outcome.rawValue)]
        }
        let body = """
            \(pushLinks(container, environment))
            <form method="get" action="\(base("webhooks", container, environment))" id="webhook-filter" class="filters">
            \(ConsoleHTML.field("Subscription ID", name: "subscription", value: subscriptionText, autocomplete: "off", hint: "Empty for every subscription."))
            \(ConsoleHTML.field("Owner", name: "user", value: userText, autocomplete: "off", placeholder: "ada@example.com", error: userError,
                                hint: "Email or user record name; empty for everyone."))
            <button type="submit" id="webhook-filter-submit">Filter</button></form>
            <p class="hint" id="webhook-status">Every attempt of the last \(services.webhooks.attemptLog.capacity) this server made, newest first; kept in memory until it restarts. Sent \(services.webhooks.sent.load(ordering: .relaxed)), gave up \(services.webhooks.failed.load(ordering: .relaxed)), refused \(services.webhooks.refused.load(ordering: .relaxed)), dropped \(services.webhooks.dropped.load(ordering: .relaxed)) since start (all containers).</p>
            \(ConsoleHTML.table(id: "webhook-attempts", caption: "Webhook attempts in \(environment.rawValue)",
                                headers: ["Time (UTC)", "Subscription", "Owner", "Host", "Answer", "Latency", "Attempt", "Outcome"],
                                rows: rows, empty: "No webhook attempts here since the server started."))
            """
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) webhook deliveries", csrf: visit.csrf, current: "containers", body: body),
                    status: userError == nil ? 200 : 400)
    }

    // MARK: Open connections

    private func connectionsPage(_ visit: Visit, container: String, environment: Environment) throws -> HTTPResponse {
        let streams = services.streams.clients(container: container, environment: environment.rawValue)
        let polls = services.webCourier.openPolls(container: container, environment: environment.rawValue)
        let users = Set(streams.map(\.user) + polls.map(\.user))
        let emails = try services.store.read { reader in
            try Dictionary(users.map { ($0, try reader.user(recordNameOrEmail: $0)?.email) }, uniquingKeysWith: { a, _ in a })
        }
        func person(_ recordName: String) -> String {
            "<a href=\"/console/users/\(ConsoleHTML.escape(recordName))\">\(ConsoleHTML.escape((emails[recordName] ?? nil) ?? recordName))</a>"
        }
        let streamRows = streams.map { client -> [String] in
            ["\(client.connection.id)", person(client.user), ConsoleHTML.escape(client.deviceID.isEmpty ? "—" : client.deviceID),
             client.muteOwnDevice ? "no" : "yes", ConsoleHTML.time(client.connectedAt)]
        }
        let pollRows = polls.map { poll -> [String] in [person(poll.user), ConsoleHTML.time(poll.since)] }
        let body = """
            \(pushLinks(container, environment))
            <p class="hint" id="connections-status">Open on this server now: \(streams.count) stream WebSockets and \(polls.count) long polls in \(environment.rawValue). Tokens are never shown.</p>
            <h2>Stream WebSockets</h2>
            \(ConsoleHTML.table(id: "streams", caption: "Stream WebSockets open now", headers: ["Connection", "Account", "Device", "Hears own changes", "Since"],
                                rows: streamRows, empty: "No stream WebSockets open."))
            <h2>Long polls</h2>
            \(ConsoleHTML.table(id: "long-polls", caption: "Long polls waiting now", headers: ["Account", "Since"],
                                rows: pollRows, empty: "No long polls waiting."))
            """
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) open connections", csrf: visit.csrf, current: "containers", body: body),
                    status: 200)
    }
}
