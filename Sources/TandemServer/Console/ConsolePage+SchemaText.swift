import Foundation
import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// `GET|POST /console/containers/{id}/schema/development/ckdb`: the development schema as
/// `.ckdb` text in a text box, saved through `SchemaService.importSchema` (as `tandem schema
/// import`; decisions C8, C35). Text that does not parse comes back in the box with
/// "Line L, column C: reason" beside it; a refused import (limits, data-losing changes without
/// the box) likewise; either way nothing is stored. The form carries the fingerprint of the
/// schema it showed (`schema`): when development's schema changed since (another administrator,
/// a form of the schema page), the save is refused (`409`) with the text kept and what is stored
/// now beside it, and saving again replaces that (decisions C60).
extension ConsolePage {
    /// `basedOn`: the fingerprint a refused save was sent with, kept so that saving again is
    /// still checked against the schema the text came from; nil: the stored schema's (a fresh
    /// page, or after a conflict, when `showStored` has shown it).
    func textPage(_ visit: Visit, _ container: String, text: String?, error: String?, notice: String?, status: Int,
                  basedOn: String? = nil, showStored: Bool = false) throws -> HTTPResponse {
        let schema = try services.store.read { try SchemaRegistry.shared.schema($0, container: container, environment: .development) } ?? Schema()
        let stored = schema.ckdb
        let base = "/console/containers/\(ConsoleHTML.percent(container))"
        let current = showStored ? """
            <details id="stored-schema" open><summary>Development's schema as stored now</summary><div class="scroll" tabindex="0" role="region" aria-label="Development's schema as stored now"><pre>\(ConsoleHTML.escape(stored))</pre></div></details>
            """ : ""
        let textarea = ConsoleHTML.hidden("schema", basedOn ?? SchemaService.fingerprint(schema)) + """
            <label for="field-ckdb">Schema (.ckdb)</label>
            <textarea name="ckdb" id="field-ckdb" rows="18" spellcheck="false" required\(error != nil ? " aria-invalid=\"true\" aria-describedby=\"field-ckdb-error\"" : "")>\(ConsoleHTML.textareaText(text ?? stored))</textarea>
            \(error.map { "<span class=\"field-error\" id=\"field-ckdb-error\" role=\"alert\">\(ConsoleHTML.escape($0))</span>" } ?? "")
            <label class="check"><input type="checkbox" name="force" value="yes" id="field-force"> Apply changes that can lose data</label>
            """
        let body = """
            \(ConsoleHTML.notice(notice))
            <p><a id="schema-development" href="\(base)/schema/development">development schema</a> · <a id="schema-diff" href="\(base)/schema/diff">Compare and deploy</a></p>
            <p class="hint">Saving replaces development's schema with the text, as <code>tandem schema import</code> does. Production's schema changes only by deploying.</p>
            \(ConsoleHTML.form(action: "\(base)/schema/development/ckdb", csrf: visit.csrf, id: "import", fields: textarea, button: "Save schema"))
            \(current)
            """
        return page(ConsoleHTML.page(title: "\(container) · development schema as .ckdb", csrf: visit.csrf, current: "containers", body: body), status: status)
    }

    func saveText(_ visit: Visit, _ container: String) throws -> HTTPResponse {
        let text = visit.fields["ckdb"] ?? ""
        do {
            _ = try Schema(parsing: text, file: "schema.ckdb")
        } catch {
            return try textPage(visit, container, text: text, error: "Line \(error.line), column \(error.column): \(error.message)", notice: nil, status: 400,
                                basedOn: visit.fields["schema"])
        }
        do {
            let outcome = try SchemaService(store: services.store).importSchema(text, file: "schema.ckdb", container: container, environment: .development,
                                                                                force: visit.fields["force"] == "yes", basedOn: visit.fields["schema"])
            let reindexed = outcome.reindexed.values.reduce(0, +)
            let notice = "Saved: \(outcome.changes.count) change\(outcome.changes.count == 1 ? "" : "s")"
                + (reindexed > 0 ? ", \(reindexed) record\(reindexed == 1 ? "" : "s") reindexed." : ".")
                + outcome.unsearchable.sorted { $0.key < $1.key }.map { type, names in
                    " \(names.count) \(type) record\(names.count == 1 ? " is" : "s are") over the full-text limit and not searchable until saved smaller: "
                        + names.prefix(20).joined(separator: ", ") + (names.count > 20 ? ", …" : "") + "."
                }.joined()
            return try textPage(visit, container, text: nil, error: nil, notice: notice, status: 200)
        } catch let error as CloudKitError where error.code == .badRequest {
            return try textPage(visit, container, text: text, error: error.reason, notice: nil, status: 400, basedOn: visit.fields["schema"])
        } catch let error as CloudKitError where error.code == .conflict {
            let reason = "Development's schema was changed after you opened this page (by another administrator or a form of the schema page), "
                + "so nothing was saved. What is stored now is shown below the form; saving again replaces it with your text."
            return try textPage(visit, container, text: text, error: reason, notice: nil, status: 409, showStored: true)
        }
    }
}
