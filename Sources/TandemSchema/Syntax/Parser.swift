/// Recursive-descent parser for the schema language (spec §5.2):
///
/// ```
/// schema      := "DEFINE SCHEMA" { (create-role | record-type) ";" }
/// create-role := "CREATE ROLE" role-name
/// record-type := "RECORD TYPE" type-name "(" [ item { "," item } ] ")"
/// item        := field-name data-type { field-option }
///              | "GRANT" right { "," right } "TO" role-name
/// data-type   := primitive | "LIST" "<" primitive ">"
/// primitive   := ASSET | BYTES | DOUBLE | INT64 | LOCATION | REFERENCE | STRING | TIMESTAMP
///              | ENCRYPTED (BYTES|STRING|DOUBLE|INT64|LOCATION|TIMESTAMP)
///              | NUMBER [ PREFERRED AS (INT64|DOUBLE) ]
/// ```
///
/// Keywords match ignoring case. An empty `( )` is accepted (a type with only system fields).
/// The rules the grammar cannot say are checked as each piece is read (`SchemaRules`), so
/// every error points at the token it is about.
struct Parser {
    private var tokens: [Token]
    private var position = 0
    private var rules: SchemaRules
    private let file: String

    init(_ text: String, file: String) throws(SchemaError) {
        var lexer = Lexer(text, file: file)
        self.tokens = try lexer.tokens()
        self.file = file
        self.rules = SchemaRules(file: file)
    }

    mutating func schema() throws(SchemaError) -> Schema {
        try keywords("DEFINE", "SCHEMA")
        var schema = Schema()
        while current.kind != .end {
            if current.isKeyword("CREATE") {
                try keywords("CREATE", "ROLE")
                let location = current.location
                let role = try name(of: "role name")
                try rules.checkNewRole(role, in: schema, at: location)
                schema.roles.append(role)
            } else if current.isKeyword("RECORD") {
                let recordType = try recordType()
                schema.recordTypes.append(recordType)
            } else {
                throw unexpected("CREATE ROLE, RECORD TYPE or end of file")
            }
            try symbol(";")
        }
        try rules.checkGrantedRoles(in: schema)
        return schema
    }

    // MARK: Grammar

    private mutating func recordType() throws(SchemaError) -> RecordType {
        try keywords("RECORD", "TYPE")
        let location = current.location
        var recordType = RecordType(name: try name(of: "record type name"))
        try rules.checkNewRecordType(recordType.name, at: location)
        try symbol("(")
        if current.isSymbol(UInt8(ascii: ")")) {
            advance()
            return recordType
        }
        repeat {
            if current.isKeyword("GRANT") {
                recordType.grants.append(try grant())
            } else {
                let field = try field(in: recordType)
                recordType.fields.append(field)
            }
        } while try separator()
        return recordType
    }

    /// After an item: true for `,` (another item follows), false for `)`.
    private mutating func separator() throws(SchemaError) -> Bool {
        if current.isSymbol(UInt8(ascii: ",")) {
            advance()
            return true
        }
        guard current.isSymbol(UInt8(ascii: ")")) else { throw unexpected("',' or ')'") }
        advance()
        return false
    }

    private mutating func grant() throws(SchemaError) -> Grant {
        advance()
        var rights: Rights = []
        while true {
            guard let right = Rights.keywords.first(where: { current.isKeyword($0.keyword) })?.member else {
                throw unexpected("READ, CREATE or WRITE")
            }
            rights.insert(right)
            advance()
            guard current.isSymbol(UInt8(ascii: ",")) else { break }
            advance()
        }
        try keywords("TO")
        let location = current.location
        let role = try name(of: "role name")
        rules.noteGrant(to: role, at: location)
        return Grant(rights, to: role)
    }

    private mutating func field(in recordType: RecordType) throws(SchemaError) -> Field {
        let nameLocation = current.location
        let name = try name(of: "field name or GRANT")
        try rules.checkNewField(name, in: recordType, at: nameLocation)
        let typeLocation = current.location
        var field = Field(name: name, type: try dataType())
        try rules.checkType(of: field, at: typeLocation)
        while let option = FieldOptions.keywords.first(where: { current.isKeyword($0.keyword) }) {
            let location = current.location
            guard !field.options.contains(option.member) else {
                throw SchemaError(file: file, at: location, message: "\(option.keyword) is given twice for field '\(name)'")
            }
            try rules.checkOption(option, for: field, at: location)
            field.options.insert(option.member)
            advance()
        }
        return field
    }

    private mutating func dataType() throws(SchemaError) -> DataType {
        guard current.isKeyword("LIST") else { return .primitive(try primitive()) }
        advance()
        try symbol("<")
        if current.isKeyword("LIST") {
            throw SchemaError(file: file, at: current.location, message: "lists do not nest: LIST<LIST<...>> is not a type")
        }
        let element = try primitive()
        try symbol(">")
        return .list(element)
    }

    private mutating func primitive() throws(SchemaError) -> Primitive {
        guard case .word(_, let keyword) = current.kind else { throw unexpected(Self.typeNames) }
        if let plain = Primitive.plain[keyword] {
            advance()
            return plain
        }
        switch keyword {
        case "ENCRYPTED":
            advance()
            guard case .word(_, let inner) = current.kind, let type = EncryptedType(rawValue: inner) else {
                throw unexpected(EncryptedType.allCases.map(\.rawValue).joined(separator: ", ") + " after ENCRYPTED")
            }
            advance()
            return .encrypted(type)
        case "NUMBER":
            advance()
            guard current.isKeyword("PREFERRED") else { return .number(preferred: nil) }
            try keywords("PREFERRED", "AS")
            guard case .word(_, let inner) = current.kind, let type = NumberType(rawValue: inner) else {
                throw unexpected("INT64 or DOUBLE after PREFERRED AS")
            }
            advance()
            return .number(preferred: type)
        default:
            throw unexpected(Self.typeNames)
        }
    }

    static let typeNames = "a type (ASSET, BYTES, DOUBLE, INT64, LOCATION, REFERENCE, STRING, TIMESTAMP, LIST<...>, ENCRYPTED ..., NUMBER)"

    // MARK: Tokens

    private var current: Token { tokens[position] }

    private mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    private mutating func keywords(_ words: String...) throws(SchemaError) {
        for (i, word) in words.enumerated() {
            guard current.isKeyword(word) else { throw unexpected(words[i...].joined(separator: " ")) }
            advance()
        }
    }

    private mutating func symbol(_ symbol: Character) throws(SchemaError) {
        guard let ascii = symbol.asciiValue, current.isSymbol(ascii) else { throw unexpected("'\(symbol)'") }
        advance()
    }

    /// A plain or quoted identifier; `what` names it in the error (`record type name`).
    private mutating func name(of what: String) throws(SchemaError) -> String {
        switch current.kind {
        case .quoted(let name):
            advance()
            return name
        case .word(let name, let upper):
            if Identifier.reserved.contains(upper) {
                throw SchemaError(file: file, at: current.location,
                                  message: "'\(name)' is a reserved word; write it in double quotes to use it as a \(what)")
            }
            if name.hasPrefix("_") {
                throw SchemaError(file: file, at: current.location,
                                  message: "'\(name)' starts with '_', which only system names do; write it in double quotes")
            }
            advance()
            return name
        default:
            throw unexpected("a \(what)")
        }
    }

    private func unexpected(_ expected: String) -> SchemaError {
        SchemaError(file: file, at: current.location, expected: expected, found: current.shown)
    }
}
