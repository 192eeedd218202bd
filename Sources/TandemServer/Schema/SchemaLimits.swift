public import TandemCore
public import TandemSchema

/// What a schema may hold (issue 14): the record API's name rules, and counts.
///
/// Record type names follow `Names.isValidRecordType` and field names `Names.isValidFieldName`
/// (decisions D12: a letter, then letters, digits or `_`, at most 255 characters), exactly as
/// `records/modify` checks them, so every type and field a schema defines can be used by a
/// record. System fields (`___recordID` and the like) are the schema language's own, and a
/// share's `cloudkit.*` fields are accepted as `records/modify` accepts them. Role names
/// are at most 255 characters. Counts are Tandem's limits (CloudKit documents none), the same
/// as what writes may grow a development schema to (`SchemaAdmission`, SC9), so a development
/// schema can always be promoted: at most ``recordTypes`` types, ``fieldsPerType`` fields per
/// type, ``fields`` fields in all and ``roles`` roles; and ``grantsPerType`` grants per type
/// (every right for every role and the three system roles: 40,000 repeated grants made every
/// public query of the container 15 times slower).
public enum SchemaLimits {
    public static let recordTypes = 500
    public static let fieldsPerType = 250
    public static let fields = 5000
    public static let roles = 100
    public static let grantsPerType = 3 * (roles + 3)

    /// - Throws: `BAD_REQUEST` naming the first name or count over a limit.
    public static func check(_ schema: Schema) throws(CloudKitError) {
        guard schema.recordTypes.count <= recordTypes else {
            throw .badRequest("a schema holds at most \(recordTypes) record types; this one has \(schema.recordTypes.count)")
        }
        guard schema.roles.count <= roles else {
            throw .badRequest("a schema holds at most \(roles) roles; this one has \(schema.roles.count)")
        }
        let total = schema.recordTypes.reduce(0) { $0 + $1.fields.count }
        guard total <= fields else {
            throw .badRequest("a schema holds at most \(fields) fields in all; this one has \(total)")
        }
        for role in schema.roles where role.isEmpty || role.utf8.count > Limits.nameLength {
            throw .badRequest("role name '\(role.prefix(40))…' (\(role.utf8.count) characters) is not 1 to \(Limits.nameLength) characters")
        }
        for type in schema.recordTypes {
            guard Names.isValidRecordType(type.name) else {
                throw .badRequest("record type name '\(type.name.prefix(40))' (\(type.name.utf8.count) characters) is not a valid type name: "
                                  + "a letter, then letters, digits or _, at most \(Limits.nameLength) characters")
            }
            guard type.grants.count <= grantsPerType else {
                throw .badRequest("record type \(type.name) has \(type.grants.count) grants; a type holds at most \(grantsPerType)")
            }
            guard type.fields.count <= fieldsPerType else {
                throw .badRequest("record type \(type.name) has \(type.fields.count) fields; a type holds at most \(fieldsPerType)")
            }
            for field in type.fields where !field.isSystem && !Names.isValidFieldName(field.name) && !Share.systemFields.contains(field.name) {
                throw .badRequest("field name '\(field.name.prefix(40))' (\(field.name.utf8.count) characters) of \(type.name) is not a valid field name: "
                                  + "a letter, then letters, digits or _, at most \(Limits.nameLength) characters")
            }
        }
    }
}
