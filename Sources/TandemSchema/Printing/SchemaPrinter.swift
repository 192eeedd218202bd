extension Schema {
    /// The schema as `.ckdb` text that parses back to an equal `Schema` (spec §5.2).
    ///
    /// Stable layout: `DEFINE SCHEMA`, then the created roles, then each record type in model
    /// order with its fields (names padded to one column, options in the order QUERYABLE
    /// SORTABLE SEARCHABLE) followed by its grants (rights in the order READ, CREATE, WRITE).
    /// Names are double-quoted only when they must be. Names are expected to be valid
    /// (no `"` or line break), as every parsed schema's are.
    public var ckdb: String {
        var out = "DEFINE SCHEMA\n"
        if !roles.isEmpty {
            out += "\n"
            for role in roles { out += "    CREATE ROLE \(Identifier.printed(role));\n" }
        }
        for recordType in recordTypes {
            out += "\n" + recordType.ckdb
        }
        return out
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
