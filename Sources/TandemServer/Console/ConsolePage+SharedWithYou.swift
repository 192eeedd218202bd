import Foundation
import TandemCore
import TandemHTTP
import TandemLinks
import TandemStore

/// Shared with You and group sessions in one container environment (issue 18 item 7;
/// decisions C44, C45):
///
/// - `GET /console/containers/{id}/sharedwithyou/{environment}` — the container's apps with
///   their `applinks:` entries and each domain's stored association file (source, when stored,
///   expiry, the rules it holds); conversations, messages and links counted; live group
///   sessions with their participants.
/// - `POST …/sharedwithyou/{environment}/test` (`app`, `url`) — the link tester: the same page
///   with `LinkService.match`'s answer (the decision, the entitlement and file that decided, the
///   rule by location and text). Matching may fetch a domain's file (and store it), so it is a
///   form with the CSRF field.
extension ConsolePage {
    func sharedWithYou(_ visit: Visit, container: String, environment name: String, action: String?) throws -> HTTPResponse {
        guard let environment = Environment(rawValue: name) else { throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'") }
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        switch (visit.context.request.head.method, action) {
        case ("GET", nil):
            return try sharedWithYouPage(visit, container: container, environment: environment, tester: LinkTester(visit.fields))
        case ("POST", "test"?):
            var tester = LinkTester(visit.fields)
            if tester.errors.isEmpty {
                do {
                    tester.result = try services.links.match(url: tester.url, appID: tester.app, container: container)
                } catch let error as CloudKitError where error.code == .notFound {
                    tester.errors["app"] = error.reason
                    tester.status = 404
                } catch let error as CloudKitError where error.code == .badRequest {
                    tester.errors["url"] = error.reason
                }
            }
            return try sharedWithYouPage(visit, container: container, environment: environment, tester: tester)
        case (_, "test"?):
            throw MethodNotAllowed(allowed: "POST")
        case ("GET", _), ("POST", _):
            throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default:
            throw MethodNotAllowed(allowed: "GET")
        }
    }

    /// The link tester's fields, their problems and the answer.
    struct LinkTester {
        var app: String
        var url: String
        var errors: [String: String] = [:]
        var result: LinkMatchResult?
        var status = 400

        init(_ fields: [String: String]) {
            app = (fields["app"] ?? "").trimmingCharacters(in: .whitespaces)
            url = (fields["url"] ?? "").trimmingCharacters(in: .whitespaces)
            if app.isEmpty { errors["app"] = "name a registered app (TEAMID.bundle.id)" }
            if url.isEmpty { errors["url"] = "enter a URL such as https://example.com/path" }
        }

        /// Whether the form was sent at all (a GET shows it empty, without complaints).
        var isBlank: Bool { app.isEmpty && url.isEmpty }
    }

    private func sharedWithYouPage(_ visit: Visit, container: String, environment: Environment, tester: LinkTester) throws -> HTTPResponse {
        let sent = visit.context.request.head.method == "POST"
        let (apps, counts) = try services.store.read { reader in
            (try reader.apps(container: container), try reader.sharedWithYouCounts(container: container, environment: environment))
        }
        let domains = apps.flatMap(\.domains).compactMap { try? AssociatedDomain($0, allowPorts: services.links.allowsPorts).host }.uniqued()
        let files = try services.store.read { reader in try domains.map { ($0, try reader.associationFile(domain: $0, container: container)) } }
        let appRows = apps.map { app -> [String] in
            ["<code>\(ConsoleHTML.escape(app.appID))</code>", app.domains.map { "<code>\(ConsoleHTML.escape($0))</code>" }.joined(separator: "<br>"),
             ConsoleHTML.time(app.createdAt)]
        }
        let fileSections = files.map { domain, file in Self.fileSection(domain: domain, file: file) }.joined(separator: "\n")
        let sessions = services.sessions.liveSessions(container: container, environment: environment)
        let sessionRows = sessions.map { session -> [String] in
            let people = session.participants.map { "\(ConsoleHTML.escape($0.user)) since \(ConsoleHTML.clock($0.joinedAt))" }
            return ["<code class=\"wrap\">\(session.id)</code>", ConsoleHTML.escape(session.activity + (session.title.map { " · " + $0 } ?? "")),
                    "<code class=\"wrap\">\(ConsoleHTML.escape(session.conversationID))</code>", ConsoleHTML.escape(session.initiator),
                    ConsoleHTML.time(session.startedAt), people.isEmpty ? "none" : people.joined(separator: "<br>"), "\(session.audience)",
                    session.messages.map(String.init) ?? "counted by another node"]
        }
        let action = "/console/containers/\(ConsoleHTML.percent(container))/sharedwithyou/\(environment.rawValue)/test"
        let shownErrors = sent ? tester.errors : [:]
        let body = """
            <p class="links"><a href="/console/containers/\(ConsoleHTML.percent(container))">\(ConsoleHTML.escape(container))</a> ·
            <a href="/console/containers/\(ConsoleHTML.percent(container))/subscriptions/\(environment.rawValue)">Subscriptions</a></p>
            <h2>Conversations</h2>
            <ul id="swy-counts"><li>Conversations: <strong id="count-conversations">\(counts.conversations)</strong></li>
            <li>Messages: <strong id="count-messages">\(counts.messages)</strong></li>
            <li>Links shared (per conversation): <strong id="count-links">\(counts.links)</strong></li></ul>
            <h2>Live group sessions</h2>
            \(ConsoleHTML.table(id: "live-sessions", caption: "Group sessions live in the cluster now",
                                headers: ["Session", "Activity", "Conversation", "Started by", "Started", "Participants (joined, UTC)", "Audience", "Messages"],
                                rows: sessionRows, empty: "No group sessions live now."))
            <h2>Apps and association files</h2>
            \(ConsoleHTML.table(id: "apps", caption: "Apps registered to \(container)", headers: ["App ID", "Associated domains", "Registered"],
                                rows: appRows, empty: "No apps. Register one with: tandem app add TEAMID.bundle.id --container \(container) --domain applinks:example.com"))
            \(fileSections)
            <h2 id="tester">Link tester</h2>
            <p class="hint">What a device with only this app installed does with the URL, decided by the server's matcher (fetching a domain's file when none is stored or it expired).</p>
            \(ConsoleHTML.form(action: action, csrf: visit.csrf, id: "link-test", fields: """
                \(ConsoleHTML.field("App ID", name: "app", value: tester.app.isEmpty && apps.count == 1 ? apps[0].appID : tester.app, autocomplete: "off",
                                    placeholder: "ABCDE12345.com.example.app", error: shownErrors["app"]))
                \(ConsoleHTML.field("URL", name: "url", value: tester.url, autocomplete: "off", placeholder: "https://example.com/path", error: shownErrors["url"]))
                """, button: "Test the link"))
            \(sent ? tester.result.map { Self.testResult($0, app: tester.app, url: tester.url) } ?? "" : "")
            """
        let status = sent && !tester.errors.isEmpty ? tester.status : 200
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) Shared with You", csrf: visit.csrf, current: "containers", body: body),
                    status: status)
    }

    /// A domain's stored file: where it came from, when, and its `applinks` rules in order.
    static func fileSection(domain: String, file: StoredAssociationFile?) -> String {
        let id = "file-" + domain.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
        guard let file else {
            return "<section id=\"\(id)\"><h3>\(ConsoleHTML.escape(domain))</h3><p>No file stored yet: the first match fetches it.</p></section>"
        }
        var state = "\(file.source == .upload ? "Uploaded" : "Fetched") \(ConsoleHTML.time(file.storedAt))"
        if let expires = file.expiresAt {
            state += expires <= Clock.milliseconds() ? "; expired \(ConsoleHTML.time(expires)) (fetched again at the next match)" : "; used until \(ConsoleHTML.time(expires))"
        }
        state += "; version \(file.version), \(file.body.count) bytes"
        var rows: [[String]] = []
        var problem = ""
        do {
            let parsed = try AssociationFile.parse(file.body)
            for (index, detail) in (parsed.applinks?.details ?? []).enumerated() {
                let apps = detail.appIDs.map { "<code>\(ConsoleHTML.escape($0))</code>" }.joined(separator: " ")
                for (position, component) in (detail.components ?? []).enumerated() {
                    rows.append(["applinks.details[\(index)].components[\(position)]", apps, "<code class=\"wrap\">\(ConsoleHTML.escape(JSONWriter.string(component.json)))</code>",
                                 component.exclude ? "exclude" : "open"])
                }
                for (position, path) in (detail.paths ?? []).enumerated() {
                    rows.append(["applinks.details[\(index)].paths[\(position)]", apps, "<code class=\"wrap\">\(ConsoleHTML.escape(path.text))</code>",
                                 path.isExclusion ? "exclude" : "open"])
                }
            }
        } catch {
            problem = "<p class=\"error\">The file does not parse: \(ConsoleHTML.escape("\(error)"))</p>"
        }
        return """
            <section id="\(id)"><h3>\(ConsoleHTML.escape(domain))</h3><p>\(state)</p>\(problem)
            \(ConsoleHTML.table(id: id + "-rules", caption: "Rules of \(domain), in the order a device reads them", headers: ["Rule", "Apps", "Pattern", "On match"],
                                rows: rows, empty: "The file has no applinks rules: no URL of \(domain) opens an app."))</section>
            """
    }

    static func testResult(_ result: LinkMatchResult, app: String, url: String) -> String {
        let (code, verdict) = switch result.decision {
        case .open: ("open", "Opens \(app)")
        case .blocked: ("blocked", "Stays in the browser: an exclusion rule matched first")
        case .noMatch: ("noMatch", "Does not open \(app): no rule matched")
        }
        var lines = "<dt>Decision</dt><dd id=\"test-decision\" data-decision=\"\(code)\">\(ConsoleHTML.escape(verdict))</dd>"
        lines += "<dt>URL</dt><dd><code class=\"wrap\">\(ConsoleHTML.escape(url))</code></dd>"
        if let rule = result.decision.rule {
            lines += "<dt>Rule</dt><dd id=\"test-rule\"><code>\(ConsoleHTML.escape(rule.location))</code> <code class=\"wrap\">\(ConsoleHTML.escape(rule.text))</code></dd>"
        }
        if let entitlement = result.entitlement { lines += "<dt>Entitlement</dt><dd><code>\(ConsoleHTML.escape(entitlement))</code></dd>" }
        if let file = result.file {
            lines += "<dt>File</dt><dd>\(ConsoleHTML.escape(file.domain)), \(file.source.rawValue == "upload" ? "uploaded" : "fetched") \(ConsoleHTML.time(file.storedAt))</dd>"
        }
        if let reason = result.reason, !reason.isEmpty { lines += "<dt>Why</dt><dd id=\"test-reason\">\(ConsoleHTML.escape(reason))</dd>" }
        return "<div class=\"created\" role=\"status\" id=\"test-result\"><dl>\(lines)</dl></div>"
    }
}
