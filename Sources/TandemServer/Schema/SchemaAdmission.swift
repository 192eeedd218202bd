import TandemCore
import TandemSchema
import TandemStore

/// What a record write does to, and needs from, its environment's schema (issue 6).
///
/// - Development: just-in-time schema. A new record type or field is added on its first write,
///   typed from the value (`Schema.inferredType(of:)`) and given every index its type can have
///   (`Schema.justInTimeOptions(for:)`, decision SC1). A later value of another type is
///   accepted and does not change the field (SC1).
/// - Production: enforced. The record must fit the schema (`Schema.violation(in:)`); there is
///   no schema until one is imported or promoted, so until then every write is refused.
///
/// `cloudkit.share` records are the server's own type and are neither inferred nor checked.
enum SchemaAdmission {
    /// Admits `record` into `scope`'s environment inside the write transaction `tx`, adding
    /// to the development schema when the record brings something new.
    /// `schemaETag`, when given, is the environment's schema etag as this transaction reads it
    /// now (`.some(nil)`: no schema), read with the zone (P74); otherwise it is read here.
    /// - Returns: the environment's schema the record was admitted by, as the store now holds
    ///   it; nil for a share record, which no schema admits.
    /// - Throws: `BAD_REQUEST` naming the record type and field.
    @discardableResult
    static func admit(_ record: Record, tx: any StoreWriting, scope: DatabaseScope, now: Int64, schemaETag: String?? = .none) throws -> Schema? {
        guard record.recordType != Share.recordType else { return nil }
        let current = try SchemaRegistry.shared.schema(tx, container: scope.container, environment: scope.environment, etag: schemaETag)
        switch scope.environment {
        case .production:
            guard let current else {
                throw CloudKitError.badRequest("the production environment of \(scope.container) has no schema yet; record type '\(record.recordType)' is unknown (tandem schema promote --container \(scope.container))")
            }
            if let violation = current.violation(in: record) {
                throw CloudKitError.badRequest("\(violation.reason) in the production schema")
            }
            return current
        case .development:
            var schema = current ?? Schema()
            if schema.admitJustInTime(record) {
                try checkGrowth(schema, recordType: record.recordType, scope: scope)
                // No index DDL on the write path: an import builds the sort indexes (SC9).
                _ = try SchemaRegistry.put(schema, tx, container: scope.container, environment: scope.environment,
                                           createSortIndexes: false, at: now)
            }
            return schema
        }
    }
}

extension SchemaAdmission {
    /// Bounds on what writes may add to a development schema (SC9): a schema grows on the
    /// single write path, so unbounded growth would slow every container.
    static let recordTypesLimit = SchemaLimits.recordTypes
    static let fieldsPerTypeLimit = SchemaLimits.fieldsPerType
    static let fieldsLimit = SchemaLimits.fields

    static func checkGrowth(_ schema: Schema, recordType: String, scope: DatabaseScope) throws {
        guard schema.recordTypes.count <= recordTypesLimit else {
            throw CloudKitError(.limitExceeded, "the development schema of \(scope.container) may have at most \(recordTypesLimit) record types; import a schema to change it")
        }
        if let type = schema.recordTypes.first(where: { $0.name == recordType }), type.fields.count > fieldsPerTypeLimit {
            throw CloudKitError(.limitExceeded, "record type '\(recordType)' may have at most \(fieldsPerTypeLimit) fields in the development schema")
        }
        let total = schema.recordTypes.reduce(0) { $0 + $1.fields.count }
        guard total <= fieldsLimit else {
            throw CloudKitError(.limitExceeded, "the development schema of \(scope.container) may have at most \(fieldsLimit) fields in all; import a schema to change it")
        }
    }
}

extension Schema {
    /// Adds `record`'s type and fields when missing; returns whether anything was added.
    mutating func admitJustInTime(_ record: Record) -> Bool {
        let index = recordTypes.firstIndex { $0.name == record.recordType }
        var type = index.map { recordTypes[$0] } ?? RecordType(name: record.recordType, grants: Self.justInTimeGrants)
        var added = false
        for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) {
            // A field keeps the type it was first inferred with; other types are let through
            // (decision SC1: development is a scratch space, production enforces).
            if type.fields.contains(where: { $0.name == name }) { continue }
            let inferred = Self.inferredType(of: value.type)
            type.fields.append(Field(name: name, type: inferred, options: Self.justInTimeOptions(for: inferred)))
            added = true
        }
        guard added || index == nil else { return false }
        if let index { recordTypes[index] = type } else { recordTypes.append(type) }
        return true
    }

    /// The grants of a record type created just in time: Apple's recommended public-database
    /// grants (spec §5.2), which are also what CloudKit gives a new type.
    static let justInTimeGrants = [Grant(.write, to: Role.creator), Grant(.create, to: Role.icloud), Grant(.read, to: Role.world)]

    /// The schema type a value's wire type implies: the type the value is stored and read back
    /// as (`{"value": 5}` is `INT64`, `{"value": 4.5}` `DOUBLE`), so a promotion deploys the
    /// type the records already have (decision F1; it was `NUMBER`, which a file's `INT64`
    /// then "changed").
    static func inferredType(of type: FieldType) -> DataType {
        func primitive(_ scalar: FieldType.ScalarType) -> Primitive {
            switch scalar {
            case .string: .string
            case .int64: .int64
            case .double: .double
            case .timestamp: .timestamp
            case .bytes: .bytes
            case .reference: .reference
            case .location: .location
            case .asset: .asset
            }
        }
        switch type {
        case .scalar(let s): return .primitive(primitive(s))
        case .list(let s): return .list(primitive(s))
        }
    }

    /// Every index a type can have (decision SC1): QUERYABLE for all but assets, SORTABLE for
    /// single values, SEARCHABLE for strings.
    static func justInTimeOptions(for type: DataType) -> FieldOptions {
        if type.element == .asset { return [] }
        var options: FieldOptions = [.queryable]
        if case .primitive = type { options.insert(.sortable) }
        if type.element == .string { options.insert(.searchable) }
        return options
    }
}
