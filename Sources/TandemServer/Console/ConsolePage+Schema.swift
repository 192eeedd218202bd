import Foundation
import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// A container environment's schema (decisions C8, C34–C39):
///
/// - `GET …/schema/{environment}` — roles, record types, fields (type, QUERYABLE, SEARCHABLE,
///   SORTABLE) and grants. Development's page edits them (`ConsoleSchemaEdit`); production's
///   is read-only: as in CloudKit, production changes only by deploying development.
/// - `POST …/schema/development/edit` — one change from that page's forms, through
///   `SchemaService.edit` (the import's rules; data-losing changes need their box, F2).
/// - `GET|POST …/schema/development/ckdb` — the schema as `.ckdb` text (`ConsolePage+SchemaText.swift`).
/// - `GET …/schema/diff`, `POST …/schema/deploy` — development against production and the
///   deployment (`ConsolePage+SchemaDiff.swift`).
extension ConsolePage {
    /// The largest `.ckdb` form a console page takes (decisions C5); the schema's other forms
    /// take `formBodyBytes`.
    static let schemaBodyBytes = 1 << 20

    /// The most record types the schema page shows at once without one being chosen.
    static let schemaTypesPerPage = 20

    /// True for the one console path whose form holds a whole `.ckdb` file.
    static func isSchemaText(_ path: String) -> Bool { path.hasPrefix("/console/containers/") && path.hasSuffix("/schema/development/ckdb") }

    func schema(_ visit: Visit, container: String, rest: [String]) throws -> HTTPResponse {
        let method = visit.context.request.head.method
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        switch (method, rest) {
        case ("GET", ["diff"]): return try diffPage(visit, container, deployError: nil, notice: nil, status: 200)
        case ("POST", ["deploy"]): return try deploy(visit, container: container)
        case ("POST", ["development", "edit"]): return try edit(visit, container)
        case ("GET", ["development", "ckdb"]): return try textPage(visit, container, text: nil, error: nil, notice: nil, status: 200)
        case ("POST", ["development", "ckdb"]): return try saveText(visit, container)
        case (_, ["production", "edit"]), (_, ["production", "ckdb"]):
            throw CloudKitError.badRequest("production's schema changes only by deploying development, as in CloudKit: compare and deploy at /console/containers/\(container)/schema/diff")
        case ("GET", _) where rest.count == 1:
            let name = rest[0]
            guard let environment = Environment(rawValue: name) else {
                throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'")
            }
            return try schemaPage(visit, container, environment, failure: nil, notice: nil, status: 200)
        case ("GET", _), ("POST", _):
            throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default:
            throw MethodNotAllowed(allowed: "GET, POST")
        }
    }

    /// A form of the development page that was refused: which one, why, and what was sent.
    struct SchemaFailure {
        var form: String
        var message: String
        var fields: [String: String]
    }

    private func edit(_ visit: Visit, _ container: String) throws -> HTTPResponse {
        let form = visit.fields["form"] ?? ""
        do {
            let change = try ConsoleSchemaEdit.change(visit.fields)
            let outcome = try SchemaService(store: services.store).edit(container: container, environment: .development,
                                                                        force: visit.fields["force"] == "yes", change)
            let said = outcome.changes.map(\.description).joined(separator: "; ")
            return try schemaPage(visit, container, .development, failure: nil,
                                  notice: outcome.changes.isEmpty ? "Nothing to change." : "Saved: \(said).", status: 200)
        } catch let error as CloudKitError where error.code == .badRequest || error.code == .notFound {
            return try schemaPage(visit, container, .development, failure: SchemaFailure(form: form, message: error.reason, fields: visit.fields),
                                  notice: nil, status: error.code.httpStatus)
        }
    }

    private func schemaPage(_ visit: Visit, _ container: String, _ environment: Environment, failure: SchemaFailure?,
                            notice: String?, status: Int) throws -> HTTPResponse {
        let current = try services.store.read { try SchemaRegistry.shared.schema($0, container: container, environment: environment) } ?? Schema()
        let base = "/console/containers/\(ConsoleHTML.percent(container))"
        let other: Environment = environment == .development ? .production : .development
        let editing = environment == .development
        let forms = ConsoleSchemaForms(action: "\(base)/schema/development/edit", csrf: visit.csrf, schema: current, failure: failure)
        // One type when one is named (`?type=`, or the type a form changed), as CloudKit Console
        // shows one at a time; all of a small schema; a large one only as the list (C37).
        let all = Array(current.recordTypes.enumerated())
        let shown = all.first { $0.element.name == visit.fields["type"] }.map { [$0] } ?? (all.count <= Self.schemaTypesPerPage ? all : [])
        let types = shown.map { index, type in
            editing ? forms.recordType(type, index: index) : Self.readOnly(type)
        }.joined(separator: "\n")
        let list = all.count > 1 || shown.isEmpty && !all.isEmpty ? "<ul id=\"record-types\" class=\"types\">" + all.map { _, type in
            "<li><a href=\"\(base)/schema/\(environment.rawValue)?type=\(ConsoleHTML.percent(type.name))\">\(ConsoleHTML.escape(type.name))</a></li>"
        }.joined() + "</ul>" : ""
        let links = editing
            ? " · <a id=\"edit-ckdb\" href=\"\(base)/schema/development/ckdb\">Edit as .ckdb</a>"
            : ""
        // A refusal of a form the page no longer has (a type removed meanwhile) is the page's.
        let roleForms = editing ? forms.removeRoles() + forms.addRole() : "", typeForm = editing ? forms.addType() : ""
        let orphan = failure.flatMap { (roleForms + typeForm + types).contains("id=\"\($0.form)-error\"") ? nil : $0.message }
        let body = """
            \(ConsoleHTML.notice(notice))\(ConsoleHTML.error(orphan))
            <p><a href="\(base)">\(ConsoleHTML.escape(container))</a> · <a id="other-environment" href="\(base)/schema/\(other.rawValue)">\(other.rawValue) schema</a>\(links) · <a id="schema-diff" href="\(base)/schema/diff">Compare and deploy</a></p>
            <p class="hint" id="production-rule">\(editing ? "Changes here apply to development at once. " : "")Production's schema cannot be edited: it changes only by deploying development to it, as in CloudKit.</p>
            <h2>Roles</h2>
            <p id="roles">Custom roles: \(current.roles.isEmpty ? "none" : ConsoleHTML.escape(current.roles.joined(separator: ", "))). Built in: _world (everyone), _icloud (any signed-in user), _creator (the record's creator).</p>
            \(roleForms)
            <h2>Record types</h2>
            \(typeForm)
            \(current.recordTypes.isEmpty ? "<p id=\"no-types\">No record types yet.</p>" : list + (shown.isEmpty ? "<p class=\"hint\" id=\"pick-type\">Choose a record type.</p>" : types))
            """
        return page(ConsoleHTML.page(title: "\(container) · \(environment.rawValue) schema", csrf: visit.csrf, current: "containers", body: body), status: status)
    }

    /// A record type as production's page shows it: fields, indexes and grants, no forms.
    private static func readOnly(_ type: RecordType) -> String {
        let rows = type.fields.filter { !$0.isSystem }.map { field in
            [ConsoleHTML.escape(field.name), ConsoleHTML.escape(field.type.description), ConsoleHTML.escape(field.options.names.joined(separator: ", "))]
        }
        let grants = type.grants.map { "\(ConsoleHTML.escape($0.rights.names.joined(separator: ", "))) to \(ConsoleHTML.escape($0.role))" }
        return """
            <h3 id="type-\(ConsoleHTML.escape(type.name))">\(ConsoleHTML.escape(type.name))</h3>
            \(ConsoleHTML.table(id: "fields-\(type.name)", caption: "Fields of \(type.name)", headers: ["Field", "Type", "Indexes"], rows: rows, empty: "No fields."))
            <p class="grants">Grants: \(grants.isEmpty ? "none" : grants.joined(separator: "; "))</p>
            """
    }
}
