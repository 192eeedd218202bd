import Foundation
import TandemCore
import TandemSchema

/// One change from the development schema page's forms (decisions C34), read from the form's
/// fields and applied to the stored schema by `SchemaService.edit`, which checks the result with
/// the `.ckdb` import's rules. This type only finds what the change names; it holds no rule of
/// the schema language.
///
/// Form fields: `change` (one of the cases' raw values), `type` (the record type), `field`,
/// `fieldType` (a ``fieldTypes`` spelling), `list` (`yes`: a LIST of it), `queryable`,
/// `searchable`, `sortable`, `read`, `create`, `write` (`yes` each), `role`.
enum ConsoleSchemaEdit: String, CaseIterable {
    case addType = "type-add"
    case removeType = "type-remove"
    case addField = "field-add"
    case removeField = "field-remove"
    case setIndexes = "field-indexes"
    case addRole = "role-add"
    case removeRole = "role-remove"
    case setGrant = "grant-set"

    /// The types a new field may have, as `.ckdb` spells them: CloudKit's field types and their
    /// encrypted forms. `NUMBER` is left out: it is what just-in-time schema infers, not a type
    /// anyone picks.
    static let fieldTypes: [String] = ["STRING", "INT64", "DOUBLE", "TIMESTAMP", "REFERENCE", "ASSET", "LOCATION", "BYTES"]
        + EncryptedType.allCases.map { "ENCRYPTED \($0.rawValue)" }

    /// The change `fields` describe, to pass to `SchemaService.edit`.
    /// - Throws: `BAD_REQUEST` for an unknown `change`, a missing name or an unknown type spelling.
    static func change(_ fields: [String: String]) throws -> @Sendable (inout Schema) throws -> Void {
        guard let kind = fields["change"].flatMap(ConsoleSchemaEdit.init(rawValue:)) else {
            throw CloudKitError.badRequest("change must be one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let type = fields["type"] ?? "", field = fields["field"] ?? ""
        let role = (fields["role"] ?? "").trimmingCharacters(in: .whitespaces)
        func named(_ value: String, _ what: String) throws -> String {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw CloudKitError.badRequest("enter a name for the \(what)") }
            return trimmed
        }
        switch kind {
        case .addType:
            let name = try named(type, "record type")
            return { $0.recordTypes.append(RecordType(name: name)) }
        case .removeType:
            return { schema in
                _ = try Self.index(of: type, in: schema)
                schema.recordTypes.removeAll { $0.name == type }
            }
        case .addField:
            let name = try named(field, "field")
            let spelled = fields["fieldType"] ?? ""
            guard fieldTypes.contains(spelled), let primitive = primitive(spelled) else {
                throw CloudKitError.badRequest("field type must be one of \(fieldTypes.joined(separator: ", "))")
            }
            let new = Field(name: name, type: fields["list"] == "yes" ? .list(primitive) : .primitive(primitive), options: options(fields))
            return { schema in schema.recordTypes[try Self.index(of: type, in: schema)].fields.append(new) }
        case .removeField:
            return { schema in
                let at = try Self.index(of: type, in: schema)
                guard schema.recordTypes[at].fields.contains(where: { $0.name == field && !$0.isSystem }) else {
                    throw CloudKitError(.notFound, "record type \(type) has no field '\(field)' to remove")
                }
                schema.recordTypes[at].fields.removeAll { $0.name == field }
            }
        case .setIndexes:
            let chosen = options(fields)
            return { schema in
                let at = try Self.index(of: type, in: schema)
                if let declared = schema.recordTypes[at].fields.firstIndex(where: { $0.name == field }) {
                    schema.recordTypes[at].fields[declared].options = chosen
                } else if let system = TandemSchema.SystemField(rawValue: field) {
                    // A system field is listed in the file only to give it indexes (spec §5.2).
                    schema.recordTypes[at].fields.append(Field(name: system.rawValue, type: system.type, options: chosen))
                } else {
                    throw CloudKitError(.notFound, "record type \(type) has no field '\(field)'")
                }
            }
        case .addRole:
            let name = try named(role, "role")
            return { $0.roles.append(name) }
        case .removeRole:
            return { schema in
                guard schema.roles.contains(role) else { throw CloudKitError(.notFound, "no role '\(role)' was created in this schema") }
                // Its grants go with it: a grant to an unknown role does not parse.
                schema.roles.removeAll { $0 == role }
                for index in schema.recordTypes.indices { schema.recordTypes[index].grants.removeAll { $0.role == role } }
            }
        case .setGrant:
            guard !role.isEmpty else { throw CloudKitError.badRequest("choose a role") }
            let rights = Rights.keywords.reduce(into: Rights()) { if fields[$1.keyword.lowercased()] == "yes" { $0.insert($1.member) } }
            return { schema in
                let at = try Self.index(of: type, in: schema)
                // One grant per role, holding all its rights; none left: no grant.
                schema.recordTypes[at].grants.removeAll { $0.role == role }
                if !rights.isEmpty { schema.recordTypes[at].grants.append(Grant(rights, to: role)) }
            }
        }
    }

    private static func index(of type: String, in schema: Schema) throws -> Int {
        guard let at = schema.recordTypes.firstIndex(where: { $0.name == type }) else {
            throw CloudKitError(.notFound, "no record type '\(type)' in this schema")
        }
        return at
    }

    private static func options(_ fields: [String: String]) -> FieldOptions {
        FieldOptions.keywords.reduce(into: FieldOptions()) { if fields[$1.keyword.lowercased()] == "yes" { $0.insert($1.member) } }
    }

    private static func primitive(_ spelled: String) -> Primitive? {
        if let plain = Primitive.plain[spelled] { return plain }
        guard let encrypted = EncryptedType.allCases.first(where: { "ENCRYPTED \($0.rawValue)" == spelled }) else { return nil }
        return .encrypted(encrypted)
    }
}
