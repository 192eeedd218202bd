import Foundation
import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// The data browser (issue 18 item 3; decisions C20–C22): pick a database, the account to act
/// as, a zone and a record type; build a query with any comparator, sorts and a page size; page
/// through the results. Queries run through `RecordService.query` with the continuation markers
/// of `records/query`, as the account chosen (`ConsoleDataSelection`), so the same schema gate,
/// grants and limits apply as over HTTP.
///
/// - `GET /console/containers/{id}/data/{environment}` — the page: the selection, the query
///   builder (`field1…3`, `comparator1…3`, `valueType1…3`, `value1…3`; `sort1…2`, `order1…2`;
///   `limit` 1–200, default 50; `marker`) and one page of results.
/// - `…/data/{environment}/record` — a record, its editor and its change log
///   (`ConsolePage+Record.swift`).
extension ConsolePage {
    static let filterRows = 3
    static let sortRows = 2
    static let defaultPageSize = 50

    /// Messages the data pages show after a redirect (`?done=KEY`).
    static let dataNotices = ["saved": "The record was saved.", "deleted": "The record was deleted."]

    func data(_ visit: Visit, container: String, environment name: String, rest: [String]) throws -> HTTPResponse {
        guard let environment = Environment(rawValue: name) else { throw CloudKitError(.notFound, "environment must be development or production, not '\(name)'") }
        guard try services.store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let selection = try services.store.read {
            try ConsoleDataSelection(container: container, environment: environment, fields: visit.fields, signedIn: visit.user, mayActAsOthers: visit.isAdmin,
                                     reader: $0)
        }
        switch (visit.context.request.head.method, rest) {
        case ("GET", []): return try browse(visit, selection)
        case ("GET", ["record"]): return try recordPage(visit, selection, name: visit.fields["name"] ?? "")
        case ("POST", ["record"]): return try saveRecord(visit, selection)
        case ("POST", ["record", "delete"]): return try deleteRecord(visit, selection)
        case ("GET", _), ("POST", _): throw CloudKitError(.notFound, "no console page at \(visit.context.request.head.path)")
        default: throw MethodNotAllowed(allowed: "GET, POST")
        }
    }

    /// The query a page's fields describe, with the problems of each row by field name
    /// (`field1`, `sort2`, `limit`).
    struct DataQuery {
        var query: Query?
        var limit = ConsolePage.defaultPageSize
        var errors: [String: String] = [:]
    }

    /// Builds the query from the form, each filter through `QueryCodec.decodeFilter` (the
    /// records/query decoder) so the console refuses what the API refuses, beside the row.
    static func dataQuery(_ fields: [String: String], recordType: String) -> DataQuery {
        var result = DataQuery()
        var filters: [Filter] = []
        for row in 1...filterRows {
            let field = (fields["field\(row)"] ?? "").trimmingCharacters(in: .whitespaces)
            guard !field.isEmpty else { continue }
            let comparator = Comparator(rawValue: fields["comparator\(row)"] ?? "") ?? .equals
            let type = FieldType(wireName: fields["valueType\(row)"] ?? "") ?? .scalar(.string)
            var text = fields["value\(row)"] ?? ""
            var json: JSONObject = ["comparator": .string(comparator.rawValue), "fieldName": .string(field)]
            do throws(CloudKitError) {
                if comparator == .near {
                    // NEAR: "latitude, longitude, metres".
                    let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    guard parts.count == 3, let metres = Double(parts[2]) else {
                        throw CloudKitError.badRequest("NEAR takes 'latitude, longitude, distance in metres'")
                    }
                    json["distance"] = .double(metres)
                    text = parts[0] + "," + parts[1]
                }
                let valueType: FieldType = comparator == .near ? .scalar(.location)
                    : comparator.takesList ? .list(scalar(type)) : type
                // A list comparator takes one value per line or comma.
                if comparator.takesList { text = text.split(separator: ",").joined(separator: "\n") }
                let value = try ConsoleFieldText.value(text, type: valueType, name: "value")
                json["fieldValue"] = .object(["value": FieldCodec.encodeValue(value), "type": .string(valueType.wireName)])
                filters.append(try QueryCodec.decodeFilter(.object(json)))
            } catch {
                result.errors["field\(row)"] = error.reason
            }
        }
        var sorts: [Sort] = []
        for row in 1...sortRows {
            let field = (fields["sort\(row)"] ?? "").trimmingCharacters(in: .whitespaces)
            guard !field.isEmpty else { continue }
            do throws(CloudKitError) {
                sorts.append(try QueryCodec.decodeSort(.object(["fieldName": .string(field), "ascending": .bool(fields["order\(row)"] != "descending")])))
            } catch {
                result.errors["sort\(row)"] = error.reason
            }
        }
        let limitText = (fields["limit"] ?? "").trimmingCharacters(in: .whitespaces)
        if !limitText.isEmpty {
            if let limit = Int(limitText), (1...Limits.resultsPerResponse).contains(limit) { result.limit = limit } else {
                result.errors["limit"] = "a page holds 1 to \(Limits.resultsPerResponse) records"
            }
        }
        if result.errors.isEmpty && !recordType.isEmpty {
            result.query = Query(recordType: recordType, filters: filters, sorts: sorts)
        }
        return result
    }

    private static func scalar(_ type: FieldType) -> FieldType.ScalarType {
        switch type { case .scalar(let s), .list(let s): s }
    }

    private func browse(_ visit: Visit, _ selection: ConsoleDataSelection) throws -> HTTPResponse {
        var selection = selection
        let fields = visit.fields
        let built = Self.dataQuery(fields, recordType: selection.recordType)
        var problem: String?
        var status = selection.errors.isEmpty && built.errors.isEmpty ? 200 : 400
        var results = ""
        var zones: [ZoneID] = []
        if let scope = selection.databaseScope(baseURL: visit.context.baseURL) {
            zones = try services.zones.list(scope: scope).compactMap { result -> ZoneID? in
                if case .zone(let id, _, _, _) = result { return id }
                return nil
            }
        }
        if let scope = selection.scope(baseURL: visit.context.baseURL) {
            if let query = built.query {
                do {
                    let zoneID = selection.zoneID
                    let fingerprint = ContinuationMarker.fingerprint(query: query, zone: zoneID, zoneWide: false)
                    var after: QueryCursor?
                    if let marker = fields["marker"], !marker.isEmpty { after = try services.tokens.decodeMarker(marker, fingerprint: fingerprint) }
                    let page = try services.records.query(query, zoneID: zoneID, zoneWide: false, limit: built.limit, after: after, scope: scope)
                    let next = page.more ? page.cursor.map { services.tokens.encodeMarker($0, fingerprint: fingerprint) } : nil
                    results = resultsTable(visit, selection, page.records, next: next, firstPage: after == nil)
                } catch let error as CloudKitError {
                    status = error.code.httpStatus
                    if error.code == .zoneNotFound { selection.errors["zone"] = error.reason } else { problem = error.reason }
                }
            }
        }
        let schema = try services.store.read { try SchemaRegistry.shared.schema($0, container: selection.container, environment: selection.environment) }
        let body = """
            \(ConsoleHTML.notice(fields["done"].flatMap { Self.dataNotices[$0] }))
            <p><a href="/console/containers/\(ConsoleHTML.percent(selection.container))">\(ConsoleHTML.escape(selection.container))</a> · <a id="other-environment" href="/console/containers/\(ConsoleHTML.percent(selection.container))/data/\(selection.environment == .development ? "production" : "development")">\(selection.environment == .development ? "production" : "development") data</a></p>
            \(queryForm(selection, fields: fields, built: built, zones: zones, types: schema?.recordTypes.map(\.name) ?? [], actsAsOthers: visit.isAdmin))
            \(problem.map { "<p class=\"error\" id=\"query-error\" role=\"alert\">\(ConsoleHTML.escape($0))</p>" } ?? "")
            \(results)
            """
        return page(ConsoleHTML.page(title: "\(selection.container) · \(selection.environment.rawValue) data", csrf: visit.csrf, admin: visit.isAdmin,
                                     current: "containers", body: body),
                    status: status)
    }

    /// The one GET form: selection and query builder.
    /// `actsAsOthers` false: no "act as" field, the page says whose data it is (C50).
    private func queryForm(_ selection: ConsoleDataSelection, fields: [String: String], built: DataQuery, zones: [ZoneID], types: [String],
                           actsAsOthers: Bool) -> String {
        func select(_ name: String, label: String, options: [(String, String)], chosen: String) -> String {
            let items = options.map { value, text in
                "<option value=\"\(ConsoleHTML.escape(value))\"\(value == chosen ? " selected" : "")>\(ConsoleHTML.escape(text))</option>"
            }.joined()
            return "<label for=\"field-\(name)\">\(ConsoleHTML.escape(label))</label><select name=\"\(name)\" id=\"field-\(name)\">\(items)</select>"
        }
        func links(_ items: [(String, String)]) -> String {
            items.map { "<a href=\"\(ConsoleHTML.escape($0.0))\">\(ConsoleHTML.escape($0.1))</a>" }.joined(separator: " · ")
        }
        var pick = selection
        let zoneLinks = links(zones.map { zone in
            pick.zoneName = zone.zoneName
            if let owner = zone.ownerRecordName, selection.database == .shared { pick.ownerText = owner }
            return (selection.base + "?" + pick.query, selection.database == .shared ? "\(zone.zoneName) of \(zone.ownerRecordName ?? "")" : zone.zoneName)
        })
        pick = selection
        let typeLinks = links(types.map { type in
            pick.recordType = type
            return (selection.base + "?" + pick.query, type)
        })
        var filterRows = ""
        for row in 1...Self.filterRows {
            let comparators = Comparator.allCases.map { ($0.rawValue, $0.rawValue) }
            let types = FieldType.ScalarType.allCases.filter { $0 != .asset }.map { ($0.rawValue, $0.rawValue) }
            filterRows += """
                <fieldset class="row" id="filter\(row)"><legend>Filter \(row)</legend>
                <div>\(ConsoleHTML.field("Field", name: "field\(row)", value: fields["field\(row)"] ?? "", autocomplete: "off", placeholder: "title or ___createTime", error: built.errors["field\(row)"]))</div>
                <div>\(select("comparator\(row)", label: "Comparator", options: comparators, chosen: fields["comparator\(row)"] ?? "EQUALS"))</div>
                <div>\(select("valueType\(row)", label: "Value type", options: types, chosen: fields["valueType\(row)"] ?? "STRING"))</div>
                <div>\(ConsoleHTML.field("Value", name: "value\(row)", value: fields["value\(row)"] ?? "", autocomplete: "off"))</div>
                </fieldset>
                """
        }
        var sortRows = ""
        for row in 1...Self.sortRows {
            sortRows += """
                <fieldset class="row" id="sort\(row)"><legend>Sort \(row)</legend>
                <div>\(ConsoleHTML.field("Field", name: "sort\(row)", value: fields["sort\(row)"] ?? "", autocomplete: "off", error: built.errors["sort\(row)"]))</div>
                <div>\(select("order\(row)", label: "Order", options: [("ascending", "ascending"), ("descending", "descending")], chosen: fields["order\(row)"] ?? "ascending"))</div>
                </fieldset>
                """
        }
        let databases = DatabaseType.allCases.map { ($0.rawValue, $0.rawValue) }
        return """
            <form method="get" action="\(selection.base)" id="query" class="wide">
            <fieldset class="row"><legend>Database</legend>
            <div>\(select("database", label: "Database", options: databases, chosen: selection.database.rawValue))
            \(selection.errors["database"].map { "<span class=\"field-error\" id=\"field-database-error\">\(ConsoleHTML.escape($0))</span>" } ?? "")</div>
            <div>\(actsAsOthers ? ConsoleHTML.field("Act as (email or user record name)", name: "user", value: selection.userText, autocomplete: "off", placeholder: "you",
                                error: selection.errors["user"], hint: "The console reads and writes as this account, with its rights. Empty: you.")
                : "<p class=\"hint\" id=\"acting-as\">You read and write as yourself, \(ConsoleHTML.escape(selection.actor.map { $0.email ?? $0.recordName } ?? "")), with your own rights.</p>")</div>
            <div>\(ConsoleHTML.field("Zone", name: "zone", value: selection.zoneName, autocomplete: "off", error: selection.errors["zone"]))
            \(zones.isEmpty ? "" : "<p class=\"hint\" id=\"zones\">Zones: \(zoneLinks)</p>")</div>
            <div>\(ConsoleHTML.field("Zone owner (shared database)", name: "owner", value: selection.ownerText, autocomplete: "off", error: selection.errors["owner"]))</div>
            <div>\(ConsoleHTML.field("Record type", name: "type", value: selection.recordType, autocomplete: "off", error: selection.errors["type"]))
            \(types.isEmpty ? "" : "<p class=\"hint\" id=\"types\">In the schema: \(typeLinks)</p>")</div>
            </fieldset>
            <fieldset><legend>Query</legend>
            <p class="hint">Field names as in the schema; system fields as ___recordID, ___createTime, ___modTime, ___createdBy, ___modifiedBy. A list comparator (IN, NOT_IN, LIST_CONTAINS_ALL…) takes values separated by commas; NEAR takes 'latitude, longitude, metres'; a TIMESTAMP is ISO 8601 (2026-12-03T04:05:06Z) or milliseconds.</p>
            \(filterRows)
            \(sortRows)
            \(ConsoleHTML.field("Records per page", name: "limit", type: "number", value: fields["limit"] ?? "\(Self.defaultPageSize)", error: built.errors["limit"]))
            </fieldset>
            <button type="submit" id="query-submit">Run query</button>
            </form>
            """
    }

    private func resultsTable(_ visit: Visit, _ selection: ConsoleDataSelection, _ records: [Record], next: String?, firstPage: Bool) -> String {
        // The page's columns: its records' field names, in name order, the first six.
        let names = Array(Set(records.flatMap(\.fields.keys)).sorted().prefix(6))
        let rows = records.map { record -> [String] in
            let link = "<a href=\"\(selection.base)/record?\(ConsoleHTML.escape(selection.query))&amp;name=\(ConsoleHTML.percent(record.recordName))\">\(ConsoleHTML.escape(record.recordName))</a>"
            return [link] + names.map { name in record.fields[name].map { ConsoleHTML.escape(Self.shortText($0)) } ?? "" }
                + [ConsoleHTML.time(record.modified?.timestamp), "<code>\(ConsoleHTML.escape(record.recordChangeTag ?? ""))</code>"]
        }
        var query = visit.fields
        query["marker"] = nil
        query["done"] = nil
        let again = query.sorted { $0.key < $1.key }.map { "\(ConsoleHTML.percent($0.key))=\(ConsoleHTML.percent($0.value))" }.joined(separator: "&")
        var paging: [String] = []
        if !firstPage { paging.append("<a id=\"first-page\" href=\"\(selection.base)?\(ConsoleHTML.escape(again))\">First page</a>") }
        if let next { paging.append("<a id=\"next-page\" href=\"\(selection.base)?\(ConsoleHTML.escape(again))&amp;marker=\(ConsoleHTML.percent(next))\">Next page</a>") }
        return """
            <h2>Records</h2>
            <p id="results-summary">\(records.count) \(records.count == 1 ? "record" : "records") of type \(ConsoleHTML.escape(selection.recordType)) in the \(ConsoleHTML.escape(selection.summary))\(next == nil ? "" : "; more follow").
            <a id="new-record" href="\(selection.base)/record?\(ConsoleHTML.escape(selection.query))">Create a \(ConsoleHTML.escape(selection.recordType)) record</a></p>
            \(ConsoleHTML.table(id: "records", caption: "Records of type \(selection.recordType)", headers: ["Record name"] + names + ["Modified", "Change tag"],
                                rows: rows, empty: "No records match."))
            \(paging.isEmpty ? "" : "<p class=\"paging\">\(paging.joined(separator: " · "))</p>")
            """
    }

    /// A value for a table cell: its text, its first line and at most 80 characters.
    static func shortText(_ value: FieldValue) -> String {
        let text: String
        if case .asset(let asset) = value { text = "asset, \(asset.size) bytes" } else { text = ConsoleFieldText.text(value) }
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let more = line.count > 80 || line.count < text.count
        return String(line.prefix(80)) + (more ? "…" : "")
    }
}
