import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// One record in the data browser (decisions C21–C23): its system fields, typed fields
/// (references as links to their targets, assets with a preview and a download link), the change
/// log's entries for it, an editor and a delete button.
///
/// - `GET …/data/{environment}/record?name=R&…selection` — the record; without `name`, the form
///   for a new record of the selection's type.
/// - `POST …/record` — create (no `tag`) or update (`tag`: the change tag the page showed, so a
///   record changed since is refused with `CONFLICT` and left as it is). Rows `name{N}`,
///   `type{N}`, `value{N}`, `remove{N}` (N from 0, `rows` of them): each value is read by
///   `ConsoleFieldText`; any bad row refuses the whole form with the reason beside the row.
/// - `POST …/record/delete` — `name`, `tag`: a delete that checks the change tag.
///
/// Reads and writes go through `RecordService.lookup` and `.modify` as the selected account.
extension ConsolePage {
    /// Empty rows a form offers for new fields.
    static let newFieldRows = 3

    /// One editor row as the form sent it (or as the record holds it).
    struct FieldRow {
        var name: String
        var type: String
        var value: String
        var remove = false
        var existing = false
        var error: String?
    }

    func recordPage(_ visit: Visit, _ selection: ConsoleDataSelection, name: String, rows: [FieldRow]? = nil, problem: String? = nil,
                    status: Int = 200) throws -> HTTPResponse {
        guard let scope = selection.scope(baseURL: visit.context.baseURL) else {
            throw CloudKitError.badRequest(selection.errors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; "))
        }
        var record: Record?
        var history: [RecordLogEntry] = []
        if !name.isEmpty {
            guard Names.isValidRecordOrZoneName(name) else { throw CloudKitError.badRequest("a record name is 1–255 printable ASCII characters") }
            switch try services.records.lookup([name], zoneID: selection.zoneID, scope: scope).first {
            case .saved(let found)?: record = found
            case .failed(let error)?: if error.code != .notFound { throw error }
            default: break
            }
            history = try services.store.read { reader in
                // The log of a record the actor can see, or of a tombstone in the actor's own zone.
                guard let (access, _) = try RecordService.resolve(reader, scope, selection.zoneID), record != nil || access.isOwner else { return [] }
                return try reader.recordLog(zone: access.zone, name: name)
            }
            if record == nil && history.isEmpty { throw CloudKitError(.notFound, "no record '\(name)' in the \(selection.summary)") }
        }
        let back = "<p><a id=\"back\" href=\"\(selection.base)?\(ConsoleHTML.escape(selection.query))\">Back to the \(ConsoleHTML.escape(selection.summary))</a></p>"
        var body = ConsoleHTML.notice(visit.fields["done"].flatMap { Self.dataNotices[$0] }) + back
        if let problem { body += "<p class=\"error\" id=\"record-error\" role=\"alert\">\(ConsoleHTML.escape(problem))</p>" }
        if let record {
            body += systemFields(record, selection, linkUsers: visit.isAdmin)
            body += "<h2>Fields</h2>" + fieldTable(record, selection, scope: scope)
        } else if !name.isEmpty {
            body += "<p id=\"tombstone\">This record was deleted.</p>"
        }
        if record != nil || name.isEmpty {
            let formRows = rows ?? record.map { existing in
                existing.fields.sorted { $0.key < $1.key }.compactMap { key, value in
                    value.holdsAsset ? nil : FieldRow(name: key, type: value.type.wireName, value: ConsoleFieldText.text(value), existing: true)
                }
            } ?? []
            body += editor(visit, selection, record: record, rows: formRows)
        }
        if !history.isEmpty { body += changeLog(history) }
        if let record {
            body += "<h2>Delete</h2>" + ConsoleHTML.form(action: selection.base + "/record/delete", csrf: visit.csrf, id: "delete-record",
                fields: selection.hiddenFields + ConsoleHTML.hidden("name", record.recordName) + ConsoleHTML.hidden("tag", record.recordChangeTag ?? ""),
                button: "Delete \(record.recordName)", danger: true)
        }
        let title = name.isEmpty ? "New \(selection.recordType.isEmpty ? "record" : selection.recordType + " record")" : name
        return page(ConsoleHTML.page(title: title, csrf: visit.csrf, admin: visit.isAdmin, current: "containers", body: body), status: status)
    }

    /// `linkUsers`: the creator and modifier link to their user pages (administrators only, C50).
    private func systemFields(_ record: Record, _ selection: ConsoleDataSelection, linkUsers: Bool) -> String {
        func stamp(_ stamp: Record.Stamp?) -> String {
            guard let stamp else { return "—" }
            let name = ConsoleHTML.escape(stamp.userRecordName)
            return "\(ConsoleHTML.time(stamp.timestamp)) by " + (linkUsers ? "<a href=\"/console/users/\(ConsoleHTML.percent(stamp.userRecordName))\">\(name)</a>" : name)
        }
        func link(_ name: String?) -> String {
            guard let name else { return "—" }
            return "<a href=\"\(selection.base)/record?\(ConsoleHTML.escape(selection.query))&amp;name=\(ConsoleHTML.percent(name))\">\(ConsoleHTML.escape(name))</a>"
        }
        return """
            <dl id="system-fields">
            <dt>Record type</dt><dd>\(ConsoleHTML.escape(record.recordType))</dd>
            <dt>Zone</dt><dd>\(ConsoleHTML.escape(selection.summary))</dd>
            <dt>Change tag</dt><dd><code id="change-tag">\(ConsoleHTML.escape(record.recordChangeTag ?? ""))</code></dd>
            <dt>Created</dt><dd>\(stamp(record.created))</dd>
            <dt>Modified</dt><dd>\(stamp(record.modified))</dd>
            <dt>Parent</dt><dd>\(link(record.parent))</dd>
            <dt>Share</dt><dd>\(link(record.share))</dd>
            </dl>
            """
    }

    private func fieldTable(_ record: Record, _ selection: ConsoleDataSelection, scope: RequestScope) -> String {
        let rows = record.fields.sorted { $0.key < $1.key }.map { name, value -> [String] in
            let shown: String
            switch value {
            case .reference, .list(_, of: .reference):
                shown = value.elements.compactMap { element -> String? in
                    guard case .reference(let reference) = element else { return nil }
                    var target = selection
                    if let zone = reference.zoneID?.zoneName { target.zoneName = zone }
                    return "<a class=\"reference\" href=\"\(selection.base)/record?\(ConsoleHTML.escape(target.query))&amp;name=\(ConsoleHTML.percent(reference.recordName))\">\(ConsoleHTML.escape(reference.recordName))</a>"
                        + (reference.action == .none ? "" : " (\(reference.action.rawValue))")
                }.joined(separator: "<br>")
            case .asset, .list(_, of: .asset):
                shown = value.elements.compactMap { element -> String? in
                    guard case .asset(let asset) = element else { return nil }
                    // The signed download URL records/lookup would give the acting account (J5).
                    let url = AssetRoutes.downloadURL(base: "", container: selection.container, environment: selection.environment.rawValue,
                                                      database: selection.database.rawValue, record: record, field: name, checksum: asset.fileChecksum,
                                                      reader: scope.user, signer: services.assetRoutes.signer)
                    // Previewed only when the stored bytes are an image by their magic bytes (C65).
                    let isImage = services.store.assets.prefix(checksum: asset.fileChecksum, count: 12)
                        .map { ImageTypes.sniff($0).hasPrefix("image/") } ?? false
                    let preview = isImage
                        ? "<img class=\"asset-preview\" src=\"\(ConsoleHTML.escape(url))\" alt=\"Preview of \(ConsoleHTML.escape(name))\" loading=\"lazy\"> "
                        : ""
                    return preview + """
                        <a class="asset" href="\(ConsoleHTML.escape(url))" download>Download (\(asset.size) bytes)</a> <code class="wrap">\(asset.fileChecksum.prefix(16))…</code>
                        """
                }.joined(separator: "<br>")
            default:
                shown = "<span class=\"value\">\(ConsoleHTML.escape(ConsoleFieldText.text(value)).replacingOccurrences(of: "\n", with: "<br>"))</span>"
            }
            return ["<code>\(ConsoleHTML.escape(name))</code>", value.type.wireName, shown]
        }
        return ConsoleHTML.table(id: "fields", caption: "Fields of \(record.recordName)", headers: ["Field", "Type", "Value"], rows: rows, empty: "No fields.")
    }

    private func editor(_ visit: Visit, _ selection: ConsoleDataSelection, record: Record?, rows: [FieldRow]) -> String {
        var all = rows
        if !rows.contains(where: { !$0.existing }) {
            all += Array(repeating: FieldRow(name: "", type: "STRING", value: ""), count: Self.newFieldRows)
        }
        let types = ConsoleFieldText.editableTypes.map(\.wireName)
        let html = all.enumerated().map { index, row -> String in
            let options = types.map { "<option\($0 == row.type ? " selected" : "")>\($0)</option>" }.joined()
            let nameInput = row.existing
                ? ConsoleHTML.hidden("name\(index)", row.name) + ConsoleHTML.hidden("existing\(index)", "yes") + "<p class=\"field-name\"><code>\(ConsoleHTML.escape(row.name))</code></p>"
                : ConsoleHTML.field("New field name", name: "name\(index)", value: row.name, autocomplete: "off")
            let describedBy = row.error == nil ? "" : " aria-invalid=\"true\" aria-describedby=\"field-value\(index)-error\""
            return """
                <fieldset class="row" id="row\(index)"><legend>\(row.existing ? "Field " + ConsoleHTML.escape(row.name) : "New field")</legend>
                <div>\(nameInput)</div>
                <div><label for="field-type\(index)">Type</label><select name="type\(index)" id="field-type\(index)">\(options)</select></div>
                <div><label for="field-value\(index)">Value</label><textarea name="value\(index)" id="field-value\(index)" rows="\(row.value.contains("\n") ? 4 : 1)"\(describedBy)>\(ConsoleHTML.textareaText(row.value))</textarea>
                \(row.error.map { "<span class=\"field-error\" id=\"field-value\(index)-error\">\(ConsoleHTML.escape($0))</span>" } ?? "")</div>
                \(row.existing ? "<div><label class=\"check\"><input type=\"checkbox\" name=\"remove\(index)\" value=\"yes\" id=\"field-remove\(index)\"\(row.remove ? " checked" : "")> Remove this field</label></div>" : "")
                </fieldset>
                """
        }.joined()
        var fields = selection.hiddenFields + ConsoleHTML.hidden("rows", "\(all.count)")
        if let record {
            fields += ConsoleHTML.hidden("name", record.recordName) + ConsoleHTML.hidden("tag", record.recordChangeTag ?? "")
                + ConsoleHTML.hidden("type", record.recordType)
        } else {
            fields += ConsoleHTML.field("Record name", name: "name", value: visit.fields["name"] ?? "", autocomplete: "off",
                                        error: nil, hint: "Empty: the server makes a UUID.")
                + ConsoleHTML.field("Record type", name: "type", value: selection.recordType, required: true, autocomplete: "off")
        }
        fields += "<p class=\"hint\">One list element per line. TIMESTAMP: ISO 8601 (2026-12-03T04:05:06Z) or milliseconds; LOCATION: 'latitude, longitude'; REFERENCE: the target's record name; BYTES: base64. Assets are uploaded by apps and kept as they are.</p>" + html
        return "<h2>\(record == nil ? "Create" : "Edit")</h2>"
            + ConsoleHTML.form(action: selection.base + "/record", csrf: visit.csrf, id: "edit-record", fields: fields,
                               button: record == nil ? "Create record" : "Save changes")
    }

    private func changeLog(_ entries: [RecordLogEntry]) -> String {
        let rows = entries.map { entry -> [String] in
            let what = switch entry.kind {
            case .saved: "saved (its latest change)"
            case .deleted: "deleted"
            case .leftShare: "left a share (its participants saw it deleted)"
            }
            return [ConsoleHTML.time(entry.changedAt), "\(entry.sequence)", what]
        }
        return "<h2>Change log</h2><p class=\"hint\">The zone's change log keeps each record's latest change and its exits from shares, which sync clients fetch; earlier versions are not kept.</p>"
            + ConsoleHTML.table(id: "change-log", caption: "Change log entries", headers: ["When", "Zone sequence", "Change"], rows: rows, empty: "No entries.")
    }

    // MARK: Actions

    func saveRecord(_ visit: Visit, _ selection: ConsoleDataSelection) throws -> HTTPResponse {
        guard let scope = selection.scope(baseURL: visit.context.baseURL) else {
            throw CloudKitError.badRequest(selection.errors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; "))
        }
        let fields = visit.fields
        let name = (fields["name"] ?? "").trimmingCharacters(in: .whitespaces)
        let tag = fields["tag"] ?? ""
        let type = (fields["type"] ?? "").trimmingCharacters(in: .whitespaces)
        let count = max(0, min(Int(fields["rows"] ?? "") ?? 0, 200))
        var rows: [FieldRow] = (0..<count).map { index in
            FieldRow(name: (fields["name\(index)"] ?? "").trimmingCharacters(in: .whitespaces), type: fields["type\(index)"] ?? "STRING",
                     value: fields["value\(index)"] ?? "", remove: fields["remove\(index)"] == "yes", existing: fields["existing\(index)"] == "yes")
        }
        // The record as the page showed it, for references that keep their action.
        var previous: [String: FieldValue] = [:]
        if !tag.isEmpty, case .saved(let record)? = try services.records.lookup([name], zoneID: selection.zoneID, scope: scope).first {
            previous = record.fields
        }
        var values: JSONObject = [:]
        var seen = Set<String>()
        for index in rows.indices where !rows[index].name.isEmpty || !rows[index].value.isEmpty {
            let row = rows[index]
            guard Names.isValidFieldName(row.name) else { rows[index].error = "a field name is a letter followed by letters, digits or '_'"; continue }
            guard seen.insert(row.name).inserted else { rows[index].error = "field '\(row.name)' appears twice"; continue }
            if row.remove { values[row.name] = JSONValue.null; continue }
            guard let fieldType = FieldType(wireName: row.type), ConsoleFieldText.editableTypes.contains(fieldType) else {
                rows[index].error = "unknown type '\(row.type)'"
                continue
            }
            do throws(CloudKitError) {
                let value = try ConsoleFieldText.value(row.value, type: fieldType, name: row.name, previous: previous[row.name])
                values[row.name] = FieldCodec.encodeField(value)
            } catch {
                rows[index].error = error.reason
            }
        }
        let isNew = tag.isEmpty
        if rows.contains(where: { $0.error != nil }) {
            return try recordPage(visit, selection, name: isNew ? "" : name, rows: rows, problem: "Nothing was saved: correct the fields marked below.", status: 400)
        }
        var record: JSONObject = ["recordType": .string(type), "fields": .object(values)]
        if !name.isEmpty { record["recordName"] = .string(name) }
        if !isNew { record["recordChangeTag"] = .string(tag) }
        let answer: RecordService.ItemResult?
        do {
            let operation = try RecordOperation.decode(.object(["operationType": .string(isNew ? "create" : "update"), "record": .object(record)]), index: 0)
            answer = try services.records.modify([operation], zoneID: selection.zoneID, atomic: true, scope: scope).first
        } catch let error as CloudKitError {
            answer = .failed(error)
        }
        switch answer {
        case .saved(let saved)?:
            log.message("console: \(visit.name) \(isNew ? "created" : "updated") record \(saved.recordName) in the \(selection.summary) (\(selection.container), \(selection.environment.rawValue))")
            return redirect("\(selection.base)/record?\(selection.query)&name=\(ConsoleHTML.percent(saved.recordName))&done=saved")
        case .failed(let error)?:
            // A refusal about one field goes beside it; the rest above the form.
            if let index = rows.firstIndex(where: { !$0.name.isEmpty && error.reason.contains("'\($0.name)'") }) {
                rows[index].error = error.reason
            }
            let problem = error.code == .conflict
                ? "Nothing was saved: the record changed since this page was read (its change tag is no longer \(tag)). Reload it to see the current version."
                : "Nothing was saved: \(error.reason)"
            return try recordPage(visit, selection, name: isNew ? "" : name, rows: rows, problem: problem, status: error.code.httpStatus)
        default:
            throw CloudKitError(.internalError, "records/modify answered nothing")
        }
    }

    func deleteRecord(_ visit: Visit, _ selection: ConsoleDataSelection) throws -> HTTPResponse {
        guard let scope = selection.scope(baseURL: visit.context.baseURL) else {
            throw CloudKitError.badRequest(selection.errors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; "))
        }
        let name = visit.fields["name"] ?? ""
        let operation = try RecordOperation.decode(.object(["operationType": "delete", "record": .object([
            "recordName": .string(name), "recordChangeTag": .string(visit.fields["tag"] ?? ""),
        ])]), index: 0)
        switch try services.records.modify([operation], zoneID: selection.zoneID, atomic: true, scope: scope).first {
        case .deleted?, .saved?:
            log.message("console: \(visit.name) deleted record \(name) in the \(selection.summary) (\(selection.container), \(selection.environment.rawValue))")
            return redirect("\(selection.base)?\(selection.query)&done=deleted")
        case .failed(let error)?:
            let problem = error.code == .conflict
                ? "Nothing was deleted: the record changed since this page was read. Reload it and decide again."
                : "Nothing was deleted: \(error.reason)"
            return try recordPage(visit, selection, name: name, problem: problem, status: error.code.httpStatus)
        case nil:
            throw CloudKitError(.internalError, "records/modify answered nothing")
        }
    }
}
