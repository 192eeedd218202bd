import TandemSchema

/// The development schema page's forms (decisions C34), each posting one `ConsoleSchemaEdit`
/// to `action`. A refused form shows its reason beside its first input and keeps what was
/// typed; ids are positional (`type0-field1-indexes`) so any name makes a valid id.
struct ConsoleSchemaForms {
    var action: String
    var csrf: String
    var schema: Schema
    var failure: ConsolePage.SchemaFailure?

    /// The reason beside form `id`, when it is the refused one, and the attributes that tie its
    /// first input to it.
    private func error(_ id: String) -> (span: String, attributes: String) {
        guard let failure, failure.form == id else { return ("", "") }
        return ("<span class=\"field-error\" id=\"\(id)-error\" role=\"alert\">\(ConsoleHTML.escape(failure.message))</span>",
                " aria-invalid=\"true\" aria-describedby=\"\(id)-error\"")
    }

    /// What the refused form `id` sent for `name`, to show again.
    private func sent(_ id: String, _ name: String) -> String? {
        failure?.form == id ? failure?.fields[name] : nil
    }

    private func form(_ id: String, _ change: ConsoleSchemaEdit, hidden: [(String, String)] = [], fields: String, button: String,
                      danger: Bool = false) -> String {
        let all = [("form", id), ("change", change.rawValue)] + hidden
        return ConsoleHTML.form(action: action, csrf: csrf, id: id, fields: all.map { ConsoleHTML.hidden($0.0, $0.1) }.joined() + fields,
                                button: button, danger: danger)
    }

    private func text(_ id: String, name: String, label: String) -> String {
        let (span, attributes) = error(id)
        return """
            <label for="\(id)-\(name)">\(ConsoleHTML.escape(label))</label><input type="text" name="\(name)" id="\(id)-\(name)" value="\(ConsoleHTML.escape(sent(id, name) ?? ""))" required autocomplete="off"\(attributes)>\(span)
            """
    }

    private func check(_ id: String, name: String, label: String, on: Bool, attributes: String = "") -> String {
        "<label class=\"check\"><input type=\"checkbox\" name=\"\(name)\" value=\"yes\" id=\"\(id)-\(name)\"\(on ? " checked" : "")\(attributes)> \(ConsoleHTML.escape(label))</label>"
    }

    /// The three index boxes, ticked as `options` has them; `attributes` go on the first.
    private func indexes(_ id: String, _ options: FieldOptions, attributes: String = "") -> String {
        FieldOptions.keywords.enumerated().map { position, option in
            check(id, name: option.keyword.lowercased(), label: option.keyword, on: options.contains(option.member), attributes: position == 0 ? attributes : "")
        }.joined()
    }

    func addRole() -> String {
        form("role-add", .addRole, fields: text("role-add", name: "role", label: "New role"), button: "Create role")
    }

    /// A remove form per created role; users hold roles by position, so removing one is data-losing.
    func removeRoles() -> String {
        schema.roles.enumerated().map { index, role in
            let id = "role\(index)-remove"
            let (span, attributes) = error(id)
            return form(id, .removeRole, hidden: [("role", role)], fields: """
                <label class="check"><input type="checkbox" name="force" value="yes" id="\(id)-force"\(attributes)> Remove role \(ConsoleHTML.escape(role)) and its grants: users who hold it lose it, and users' later roles move (can lose data)</label>\(span)
                """, button: "Remove role", danger: true)
        }.joined(separator: "\n")
    }

    func addType() -> String {
        form("type-add", .addType, fields: text("type-add", name: "type", label: "New record type"), button: "Add record type")
    }

    /// A record type's section: its fields with their index and remove forms, a new field, its
    /// grants, and removing the type.
    func recordType(_ type: RecordType, index: Int) -> String {
        let prefix = "type\(index)"
        let name = ConsoleHTML.escape(type.name)
        let rows = type.allFields.enumerated().map { position, field -> [String] in
            let id = "\(prefix)-field\(position)"
            let hidden = [("type", type.name), ("field", field.name)]
            let (span, attributes) = error(id + "-indexes")
            let indexForm = form(id + "-indexes", .setIndexes, hidden: hidden,
                                 fields: "<fieldset class=\"indexes\"><legend>Indexes of \(ConsoleHTML.escape(field.name))</legend>\(indexes(id + "-indexes", field.options, attributes: attributes))\(span)</fieldset>",
                                 button: "Save indexes")
            var remove = "System field"
            if !field.isSystem {
                let (span, attributes) = error(id + "-remove")
                remove = form(id + "-remove", .removeField, hidden: hidden, fields: """
                    <label class="check"><input type="checkbox" name="force" value="yes" id="\(id)-remove-force"\(attributes)> Remove \(ConsoleHTML.escape(field.name)): clients can no longer read or write its stored values (can lose data)</label>\(span)
                    """, button: "Remove field", danger: true)
            }
            return [ConsoleHTML.escape(field.name), ConsoleHTML.escape(field.type.description), indexForm, remove]
        }
        // Unlisted system fields have no indexes and cannot be removed: folded away until wanted.
        let declared = rows.prefix(type.fields.count), system = rows.dropFirst(type.fields.count)
        let grants = type.grants.map { "\(ConsoleHTML.escape($0.rights.names.joined(separator: ", "))) to \(ConsoleHTML.escape($0.role))" }
        let roles = (Role.builtIn.sorted() + schema.roles)
        let grantID = "\(prefix)-grant"
        let chosenRole = sent(grantID, "role") ?? Role.world
        let held = type.rightsByRole[chosenRole] ?? []
        let roleOptions = roles.map { "<option\($0 == chosenRole ? " selected" : "")>\(ConsoleHTML.escape($0))</option>" }.joined()
        let (grantSpan, grantAttributes) = error(grantID)
        let rights = Rights.keywords.map { check(grantID, name: $0.keyword.lowercased(), label: $0.keyword, on: held.contains($0.member)) }.joined()
        let fieldID = "\(prefix)-field-add"
        let chosenType = sent(fieldID, "fieldType") ?? "STRING"
        let typeOptions = ConsoleSchemaEdit.fieldTypes.map { "<option\($0 == chosenType ? " selected" : "")>\($0)</option>" }.joined()
        let sentOptions = FieldOptions.keywords.reduce(into: FieldOptions()) { if sent(fieldID, $1.keyword.lowercased()) == "yes" { $0.insert($1.member) } }
        let (removeSpan, removeAttributes) = error("\(prefix)-remove")
        return """
            <section class="record-type" aria-labelledby="\(prefix)"><h3 id="\(prefix)">\(name)</h3>
            \(ConsoleHTML.table(id: "\(prefix)-fields", caption: "Fields of \(type.name)", headers: ["Field", "Type", "Indexes", "Remove"], rows: Array(declared), empty: "No fields."))
            <details id="\(prefix)-system"><summary>System fields of \(name) (indexes)</summary>
            \(ConsoleHTML.table(id: "\(prefix)-system-fields", caption: "System fields of \(type.name)", headers: ["Field", "Type", "Indexes", "Remove"], rows: Array(system), empty: "Every system field is listed above."))
            </details>
            \(form(fieldID, .addField, hidden: [("type", type.name)], fields: """
                <fieldset><legend>New field of \(name)</legend>\(text(fieldID, name: "field", label: "Name"))
                <label for="\(fieldID)-fieldType">Type</label><select name="fieldType" id="\(fieldID)-fieldType">\(typeOptions)</select>
                \(check(fieldID, name: "list", label: "A list of this type", on: sent(fieldID, "list") == "yes"))\(indexes(fieldID, sentOptions))</fieldset>
                """, button: "Add field"))
            <p class="grants" id="\(prefix)-grants">Grants: \(grants.isEmpty ? "none" : grants.joined(separator: "; "))</p>
            \(form(grantID, .setGrant, hidden: [("type", type.name)], fields: """
                <fieldset><legend>Rights of a role on \(name) (public database)</legend>
                <label for="\(grantID)-role">Role</label><select name="role" id="\(grantID)-role"\(grantAttributes)>\(roleOptions)</select>\(grantSpan)
                \(rights)<span class="hint">Sets the role's rights to the ticked ones; none ticked removes its grant.</span></fieldset>
                """, button: "Set rights"))
            \(form("\(prefix)-remove", .removeType, hidden: [("type", type.name)], fields: """
                <label class="check"><input type="checkbox" name="force" value="yes" id="\(prefix)-remove-force"\(removeAttributes)> Remove record type \(name): clients can no longer read or write its records (can lose data)</label>\(removeSpan)
                """, button: "Remove record type", danger: true))
            </section>
            """
    }
}
