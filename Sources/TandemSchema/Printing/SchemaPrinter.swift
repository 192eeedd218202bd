extension Schema {
    /// The schema as `.ckdb` text that parses back to an equal `Schema` (spec §5.2).
    ///
    /// Stable layout, the one CloudKit's dashboard exports: `DEFINE SCHEMA`, the created
    /// roles, then each record type in model order with its fields (names padded to one
    /// column, options in the order QUERYABLE SEARCHABLE SORTABLE) and then its grants (rights
    /// in the order READ, CREATE, WRITE); a blank line after each block. Names are
    /// double-quoted only when they must be. Names are expected to be valid (no `"` or line
    /// break), as every parsed schema's are.
    public var ckdb: String {
        var out = "DEFINE SCHEMA\n\n"
        if !roles.isEmpty {
            out += roles.map { "    CREATE ROLE \(Identifier.printed($0));\n" }.joined() + "\n"
        }
        return out + recordTypes.map { $0.ckdb + "\n" }.joined()
    }
}

extension RecordType {
    /// `    RECORD TYPE name ( ... );` with one item per line, as `Schema.ckdb` prints it.
    var ckdb: String {
        let names = fields.map { Identifier.printed($0.name) }
        let width = names.map(\.count).max() ?? 0
        var items = zip(names, fields).map { name, field in
            let padded = name + String(repeating: " ", count: width - name.count)
            return ([padded, field.type.description] + field.options.names).joined(separator: " ")
        }
        items += grants.map { "GRANT \($0.rights.names.joined(separator: ", ")) TO \(Identifier.printed($0.role))" }
        guard !items.isEmpty else { return "    RECORD TYPE \(Identifier.printed(name)) ();\n" }
        return "    RECORD TYPE \(Identifier.printed(name)) (\n"
            + items.map { "        " + $0 }.joined(separator: ",\n")
            + "\n    );\n"
    }
}
