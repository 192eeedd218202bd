import Foundation
import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// A container environment's schema (decisions C8): record types with their fields, types,
/// indexes (QUERYABLE, SORTABLE, SEARCHABLE) and grants, read-only, and an import of `.ckdb`
/// text through `SchemaService.importSchema` (as `tandem schema import`): a file that does not
/// parse is shown again with its line, column and reason beside it, and nothing changes;
/// data-losing changes need the force box in either environment (the CLI's `--force`, decision F2).
/// The development page lists what deploying would change in production (data-losing changes
/// marked) and deploys through `SchemaService.promote`, as `tandem schema promote`.
extension ConsolePage {
    /// The largest schema import form a console page takes.
    static let schemaBodyBytes = 1 << 20

    func schema(_ visit: Visit, container: String, environment name: String) throws -> HTTPResponse {
        if name == "deploy" {
            guard visit.context.request.head.method == "POST" else { throw MethodNotAllowed(allowed: "POST") }
            return try deploy(visit, container: container)
        }
        guard let environment = Environment(rawValue: name) else {
            throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'")
        }
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        switch visit.context.request.head.method {
        case "GET":
            return try schemaPage(visit, container, environment, text: nil, error: nil, notice: nil, status: 200)
        case "POST":
            let text = visit.fields["ckdb"] ?? ""
            if let error = Self.parseError(text) {
                return try schemaPage(visit, container, environment, text: text,
                                      error: "Line \(error.line), column \(error.column): \(error.message)", notice: nil, status: 400)
            }
            do {
                let outcome = try SchemaService(store: services.store).importSchema(text, file: "schema.ckdb", container: container, environment: environment,
                                                                                    force: visit.fields["force"] == "yes")
                let reindexed = outcome.reindexed.values.reduce(0, +)
                let notice = "Imported: \(outcome.changes.count) change\(outcome.changes.count == 1 ? "" : "s")"
                    + (reindexed > 0 ? ", \(reindexed) record\(reindexed == 1 ? "" : "s") reindexed." : ".")
                return try schemaPage(visit, container, environment, text: nil, error: nil, notice: notice, status: 200)
            } catch let error as CloudKitError where error.code == .badRequest {
                return try schemaPage(visit, container, environment, text: text, error: error.reason, notice: nil, status: 400)
            }
        default:
            throw MethodNotAllowed(allowed: "GET, POST")
        }
    }

    /// Copies the development schema to production through `SchemaService.promote` (as
    /// `tandem schema promote`): data-losing changes need the force box.
    private func deploy(_ visit: Visit, container: String) throws -> HTTPResponse {
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        do {
            let outcome = try SchemaService(store: services.store).promote(container: container, force: visit.fields["force"] == "yes")
            let count = outcome.changes.count
            return try schemaPage(visit, container, .production, text: nil, error: nil,
                                  notice: "Deployed to production: \(count) change\(count == 1 ? "" : "s").", status: 200)
        } catch let error as CloudKitError where error.code == .badRequest {
            return try schemaPage(visit, container, .development, text: nil, error: nil, notice: nil, deployError: error.reason, status: 400)
        }
    }

    /// Why `text` does not parse as a `.ckdb` file, or nil when it does.
    static func parseError(_ text: String) -> SchemaError? {
        do {
            _ = try Schema(parsing: text, file: "schema.ckdb")
            return nil
        } catch {
            return error
        }
    }

    private func schemaPage(_ visit: Visit, _ container: String, _ environment: Environment, text: String?, error: String?,
                            notice: String?, deployError: String? = nil, status: Int) throws -> HTTPResponse {
        let (current, production) = try services.store.read { reader in
            (try SchemaRegistry.shared.schema(reader, container: container, environment: environment) ?? Schema(),
             try SchemaRegistry.shared.schema(reader, container: container, environment: .production) ?? Schema())
        }
        let base = "/console/containers/\(ConsoleHTML.percent(container))"
        let other: Environment = environment == .development ? .production : .development
        let types = current.recordTypes.map { type -> String in
            let rows = type.fields.filter { !$0.isSystem }.map { field in
                [ConsoleHTML.escape(field.name), ConsoleHTML.escape(field.type.description), ConsoleHTML.escape(field.options.names.joined(separator: ", "))]
            }
            let grants = type.grants.map { "\(ConsoleHTML.escape($0.rights.names.joined(separator: ", "))) to \(ConsoleHTML.escape($0.role))" }
            return """
                <h3 id="type-\(ConsoleHTML.escape(type.name))">\(ConsoleHTML.escape(type.name))</h3>
                \(ConsoleHTML.table(id: "fields-\(type.name)", caption: "Fields of \(type.name)", headers: ["Field", "Type", "Indexes"], rows: rows, empty: "No fields."))
                <p class="grants">Grants: \(grants.isEmpty ? "none" : grants.joined(separator: "; "))</p>
                """
        }.joined(separator: "\n")
        let textarea = """
            <label for="field-ckdb">Schema (.ckdb)</label>
            <textarea name="ckdb" id="field-ckdb" rows="14" spellcheck="false" required\(error != nil ? " aria-invalid=\"true\" aria-describedby=\"field-ckdb-error\"" : "")>\(ConsoleHTML.textareaText(text ?? current.ckdb))</textarea>
            \(error.map { "<span class=\"field-error\" id=\"field-ckdb-error\" role=\"alert\">\(ConsoleHTML.escape($0))</span>" } ?? "")
            """
        // Both environments: an import that can lose data needs the box (decision F2).
        let force = """
            <label class="check"><input type="checkbox" name="force" value="yes" id="field-force"> Apply changes that can lose data</label>
            """
        var deploy = ""
        if environment == .development {
            // What `tandem schema promote` would change in production, data-losing changes marked.
            let changes = production.changes(to: current)
            let items = changes.map { change in
                change.losesData ? "<li class=\"losing\"><strong>Can lose production data:</strong> \(ConsoleHTML.escape(change.description))</li>"
                    : "<li>\(ConsoleHTML.escape(change.description))</li>"
            }.joined()
            let losing = changes.contains(where: \.losesData)
            let force = losing ? "<label class=\"check\"><input type=\"checkbox\" name=\"force\" value=\"yes\" id=\"field-deploy-force\"> Apply the changes that can lose production data</label>" : ""
            deploy = """
                <h2>Deploy to production</h2>
                \(changes.isEmpty ? "<p id=\"deploy-none\">Production has this schema already.</p>" : """
                    <ul id="deploy-changes">\(items)</ul>
                    \(deployError.map { "<p class=\"error\" id=\"deploy-error\" role=\"alert\">\(ConsoleHTML.escape($0))</p>" } ?? "")
                    \(ConsoleHTML.form(action: "\(base)/schema/deploy", csrf: visit.csrf, id: "deploy", fields: force, button: "Deploy to production"))
                    """)
                """
        }
        let body = """
            \(ConsoleHTML.notice(notice))
            <p><a href="\(base)">\(ConsoleHTML.escape(container))</a> · <a id="other-environment" href="\(base)/schema/\(other.rawValue)">\(other.rawValue) schema</a></p>
            <p id="roles">Custom roles: \(current.roles.isEmpty ? "none" : ConsoleHTML.escape(current.roles.joined(separator: ", ")))</p>
            <h2>Record types</h2>
            \(current.recordTypes.isEmpty ? "<p id=\"no-types\">No record types yet.</p>" : types)
            \(deploy)
            <h2>Import</h2>
            <p class="hint">Replaces this environment's schema with the text, as <code>tandem schema import</code> does.</p>
            \(ConsoleHTML.form(action: "\(base)/schema/\(environment.rawValue)", csrf: visit.csrf, id: "import", fields: textarea + force, button: "Import schema"))
            """
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) schema", csrf: visit.csrf, current: "containers", body: body), status: status)
    }
}
