import Foundation
import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// `GET|POST /console/containers/{id}/schema/development/ckdb`: the development schema as
/// `.ckdb` text in a text box, saved through `SchemaService.importSchema` (as `tandem schema
/// import`; decisions C8, C35). Text that does not parse comes back in the box with
/// "Line L, column C: reason" beside it; a refused import (limits, data-losing changes without
/// the box) likewise; either way nothing is stored.
extension ConsolePage {
    func textPage(_ visit: Visit, _ container: String, text: String?, error: String?, notice: String?, status: Int) throws -> HTTPResponse {
        let stored = try SchemaService(store: services.store).export(container: container, environment: .development)
        let base = "/console/containers/\(ConsoleHTML.percent(container))"
        let textarea = """
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
            """
        return page(ConsoleHTML.page(title: "\(container) · development schema as .ckdb", csrf: visit.csrf, current: "containers", body: body), status: status)
    }

    func saveText(_ visit: Visit, _ container: String) throws -> HTTPResponse {
        let text = visit.fields["ckdb"] ?? ""
        do {
            _ = try Schema(parsing: text, file: "schema.ckdb")
        } catch {
            return try textPage(visit, container, text: text, error: "Line \(error.line), column \(error.column): \(error.message)", notice: nil, status: 400)
        }
        do {
            let outcome = try SchemaService(store: services.store).importSchema(text, file: "schema.ckdb", container: container, environment: .development,
                                                                                force: visit.fields["force"] == "yes")
            let reindexed = outcome.reindexed.values.reduce(0, +)
            let notice = "Saved: \(outcome.changes.count) change\(outcome.changes.count == 1 ? "" : "s")"
                + (reindexed > 0 ? ", \(reindexed) record\(reindexed == 1 ? "" : "s") reindexed." : ".")
            return try textPage(visit, container, text: nil, error: nil, notice: notice, status: 200)
        } catch let error as CloudKitError where error.code == .badRequest {
            return try textPage(visit, container, text: text, error: error.reason, notice: nil, status: 400)
        }
    }
}
