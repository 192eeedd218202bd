import Foundation
import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// `GET /console/containers/{id}/schema/diff` and `POST …/schema/deploy` (decisions C8, C36):
/// what deploying would change in production, per record type and field, each data-losing
/// change marked in words with why; and the deployment, through `SchemaService.promote` as
/// `tandem schema promote` (data-losing changes need the box; a refusal changes nothing). The
/// deploy form carries the fingerprint of the two schemas it compared (`schema`): when either
/// changed since, nothing is deployed (`409`) and the page shows the comparison as it is now
/// (decisions C61).
extension ConsolePage {
    func diffPage(_ visit: Visit, _ container: String, deployError: String?, notice: String?, status: Int) throws -> HTTPResponse {
        let (development, production) = try services.store.read { reader in
            (try SchemaRegistry.shared.schema(reader, container: container, environment: .development) ?? Schema(),
             try SchemaRegistry.shared.schema(reader, container: container, environment: .production) ?? Schema())
        }
        let base = "/console/containers/\(ConsoleHTML.percent(container))"
        let changes = production.changes(to: development)
        let rows = changes.map { change -> [String] in
            let row = Self.diffRow(change)
            let loss = row.losing.map { "<strong>Can lose production data:</strong> \(ConsoleHTML.escape($0))" } ?? "No"
            return [row.recordType, row.item, row.change, row.development, row.production].map(ConsoleHTML.escape) + [loss]
        }
        let losing = changes.filter(\.losesData).count
        let force = losing > 0
            ? "<label class=\"check\"><input type=\"checkbox\" name=\"force\" value=\"yes\" id=\"field-deploy-force\"\(deployError != nil ? " aria-invalid=\"true\" aria-describedby=\"deploy-error\"" : "")> Deploy the \(losing) change\(losing == 1 ? "" : "s") that can lose production data</label>"
            : ""
        let fingerprint = ConsoleHTML.hidden("schema", SchemaService.fingerprint(production: production, development: development))
        let summary = "\(changes.count) change\(changes.count == 1 ? "" : "s"), \(losing) can lose production data."
        let body = """
            \(ConsoleHTML.notice(notice))
            <p><a href="\(base)">\(ConsoleHTML.escape(container))</a> · <a href="\(base)/schema/development">development schema</a> · <a href="\(base)/schema/production">production schema</a></p>
            <p class="hint">What deploying development's schema would change in production, as <code>tandem schema diff</code> and <code>tandem schema promote</code> see it. Stored records are never deleted; a change marked as losing data is one after which clients can no longer read or write some stored values.</p>
            \(changes.isEmpty ? "<p id=\"deploy-none\">Production has this schema already.</p>" : """
                <p id="diff-summary">\(summary)</p>
                \(ConsoleHTML.table(id: "diff", caption: "Development against production", headers: ["Record type", "Field or role", "Change", "Development", "Production", "Loses data"], rows: rows, empty: ""))
                \(deployError.map { "<p class=\"error\" id=\"deploy-error\" role=\"alert\">\(ConsoleHTML.escape($0))</p>" } ?? "")
                \(ConsoleHTML.form(action: "\(base)/schema/deploy", csrf: visit.csrf, id: "deploy", fields: fingerprint + force, button: "Deploy to production"))
                """)
            """
        return page(ConsoleHTML.page(title: "\(container) · deploy schema", csrf: visit.csrf, current: "containers", body: body), status: status)
    }

    /// Copies the development schema to production through `SchemaService.promote` (as
    /// `tandem schema promote`): data-losing changes need the force box.
    func deploy(_ visit: Visit, container: String) throws -> HTTPResponse {
        do {
            let outcome = try SchemaService(store: services.store).promote(container: container, force: visit.fields["force"] == "yes",
                                                                           basedOn: visit.fields["schema"])
            let count = outcome.changes.count
            return try diffPage(visit, container, deployError: nil, notice: "Deployed to production: \(count) change\(count == 1 ? "" : "s").", status: 200)
        } catch let error as CloudKitError where error.code == .badRequest {
            return try diffPage(visit, container, deployError: error.reason, notice: nil, status: 400)
        } catch let error as CloudKitError where error.code == .conflict {
            return try diffPage(visit, container, deployError: "Development's or production's schema changed after you opened this comparison, so nothing was deployed. "
                                + "The changes below are the ones deploying makes now: check them and deploy again.", notice: nil, status: 409)
        }
    }

    /// One change as a row: where, what, each side, and why it can lose data (nil: it cannot).
    static func diffRow(_ change: SchemaChange) -> (recordType: String, item: String, change: String, development: String, production: String, losing: String?) {
        func spelled(_ options: FieldOptions) -> String { options.isEmpty ? "no indexes" : options.names.joined(separator: ", ") }
        func spelled(_ rights: Rights) -> String { rights.isEmpty ? "no rights" : rights.names.joined(separator: ", ") }
        func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
        switch change {
        case .roleAdded(let role): return ("—", "role \(role)", "added", role, "—", nil)
        case .roleRemoved(let role): return ("—", "role \(role)", "removed", "—", role, "users who hold the role lose it")
        case .rolePositionsChanged(let from, let to):
            return ("—", "roles", "reordered", to.joined(separator: ", "), from.joined(separator: ", "),
                    "users' roles are stored by position, so users would hold other roles")
        case .recordTypeAdded(let type):
            return (type.name, "—", "added", "\(count(type.fields.count, "field")), \(count(type.grants.count, "grant"))", "—", nil)
        case .recordTypeRemoved(let type):
            return (type.name, "—", "removed", "—", count(type.fields.count, "field"), "clients can no longer read or write its records")
        case .fieldAdded(let type, let field):
            return (type, field.name, "added", ([field.type.description] + field.options.names).joined(separator: " "), "—", nil)
        case .fieldRemoved(let type, let field):
            return (type, field.name, "removed", "—", field.type.description, "clients can no longer read or write its stored values")
        case .fieldTypeChanged(let type, let field, let from, let to):
            return (type, field, "type changed", to.description, from.description, "values stored as \(from) no longer match the field's type")
        case .fieldOptionsChanged(let type, let field, let from, let to):
            return (type, field, "indexes changed", spelled(to), spelled(from), nil)
        case .rightsChanged(let type, let role, let from, let to):
            return (type, "grant to \(role)", "rights changed", spelled(to), spelled(from), nil)
        }
    }
}
