/// The rules of the schema language that the grammar does not express (spec §5.2), checked
/// by the parser as it reads so each error points at the offending name:
///
/// - record type, field and role names are unique (exact, case-sensitive comparison);
/// - names starting with `_` belong to the system: a field may use one only for the six
///   system fields, with their fixed types; a role may not be created with one;
/// - every `GRANT ... TO role` names a built-in role or one created anywhere in the file;
/// - `SEARCHABLE` applies to `STRING` and `LIST<STRING>` only; `ENCRYPTED` fields take no
///   index options (the server only sees ciphertext).
struct SchemaRules {
    let file: String
    private var recordTypeNames: Set<String> = []
    private var grantedRoles: [(role: String, location: SourceLocation)] = []

    init(file: String) { self.file = file }

    mutating func checkNewRecordType(_ name: String, at location: SourceLocation) throws(SchemaError) {
        if name.hasPrefix("_") {
            throw error(at: location, "record type '\(name)' starts with '_', which is reserved for the system")
        }
        guard recordTypeNames.insert(name).inserted else {
            throw error(at: location, "record type '\(name)' is defined twice")
        }
    }

    func checkNewField(_ name: String, in recordType: RecordType, at location: SourceLocation) throws(SchemaError) {
        if name.hasPrefix("_"), SystemField(rawValue: name) == nil {
            let known = SystemField.allCases.map(\.rawValue).joined(separator: ", ")
            throw error(at: location, "field '\(name)' in record type '\(recordType.name)' starts with '_', which is reserved for the system fields (\(known))")
        }
        if recordType.fields.contains(where: { $0.name == name }) {
            throw error(at: location, "field '\(name)' is defined twice in record type '\(recordType.name)'")
        }
    }

    func checkType(of field: Field, at location: SourceLocation) throws(SchemaError) {
        if let system = SystemField(rawValue: field.name), system.type != field.type {
            throw error(at: location, "system field '\(field.name)' is \(system.type), not \(field.type)")
        }
    }

    func checkOption(_ option: (member: FieldOptions, keyword: String), for field: Field, at location: SourceLocation) throws(SchemaError) {
        if case .encrypted = field.type.element {
            throw error(at: location, "field '\(field.name)' is \(field.type): encrypted fields cannot be \(option.keyword)")
        }
        if option.member == .searchable, field.type.element != .string {
            throw error(at: location, "field '\(field.name)' is \(field.type): only STRING and LIST<STRING> fields can be SEARCHABLE")
        }
    }

    func checkNewRole(_ name: String, in schema: Schema, at location: SourceLocation) throws(SchemaError) {
        if Role.builtIn.contains(name) {
            throw error(at: location, "role '\(name)' is built in and cannot be created")
        }
        if name.hasPrefix("_") {
            throw error(at: location, "role '\(name)' starts with '_', which is reserved for the built-in roles")
        }
        if schema.roles.contains(name) {
            throw error(at: location, "role '\(name)' is created twice")
        }
    }

    mutating func noteGrant(to role: String, at location: SourceLocation) {
        grantedRoles.append((role, location))
    }

    /// Run once the whole file is read: a role may be created after the grant that names it.
    func checkGrantedRoles(in schema: Schema) throws(SchemaError) {
        if let unknown = grantedRoles.first(where: { !schema.hasRole($0.role) }) {
            let known = (Role.builtIn.sorted() + schema.roles).joined(separator: ", ")
            throw error(at: unknown.location, "GRANT names role '\(unknown.role)', which is neither built in nor created with CREATE ROLE (known: \(known))")
        }
    }

    private func error(at location: SourceLocation, _ message: String) -> SchemaError {
        SchemaError(file: file, at: location, message: message)
    }
}
