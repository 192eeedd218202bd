public import TandemCore

extension Schema {
    /// The first way `record` breaks this schema, or nil when it fits: its type must exist,
    /// and its fields must pass `RecordType.violation(in:)`. Spec §5.2; issue 6, production
    /// enforcement.
    public func violation(in record: Record) -> SchemaViolation? {
        guard let type = recordType(named: record.recordType) else {
            return SchemaViolation(kind: .unknownRecordType, recordType: record.recordType, field: nil,
                                   reason: "record type '\(record.recordType)' is not in the schema")
        }
        return type.violation(in: record)
    }
}

extension RecordType {
    /// The first field of `record` (by name, so the answer is stable) that this type does not
    /// declare, that is a system field (set by the server, never by a client), or whose value
    /// is of another type; nil when every field fits. Fields the record leaves out are fine:
    /// CloudKit fields are optional. Which value types a declared type accepts is
    /// `DataType.accepts(_:)`.
    public func violation(in record: Record) -> SchemaViolation? {
        for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) {
            func violation(_ kind: SchemaViolation.Kind, _ reason: String) -> SchemaViolation {
                SchemaViolation(kind: kind, recordType: self.name, field: name, reason: reason)
            }
            if SystemField.hasSystemPrefix(name) {
                return violation(.systemField, "field '\(name)' of record type '\(self.name)' is a system field, set by the server")
            }
            guard let field = fields.first(where: { $0.name == name }) else {
                return violation(.unknownField, "record type '\(self.name)' has no field '\(name)'")
            }
            if !field.type.accepts(value.type) {
                return violation(.wrongType, "field '\(name)' of record type '\(self.name)' is \(field.type), not \(value.type)")
            }
        }
        return nil
    }
}

extension DataType {
    /// True when a value of wire type `valueType` may be stored in a field of this type.
    ///
    /// A list needs a list of an accepted element type, a single value a single value. Beyond
    /// the exact match: an `INT64` value fits `DOUBLE` and `TIMESTAMP` (an untyped JSON integer
    /// decodes as `INT64`, and the server reads it as the declared type); `NUMBER` takes
    /// `INT64` or `DOUBLE` (`PREFERRED AS INT64` only `INT64`); `ENCRYPTED t` takes `t` or
    /// `BYTES` (ciphertext, sent as `ENCRYPTED_BYTES`).
    public func accepts(_ valueType: FieldType) -> Bool {
        switch (self, valueType) {
        case (.primitive(let p), .scalar(let s)), (.list(let p), .list(let s)): p.accepts(s)
        default: false
        }
    }
}

extension Primitive {
    func accepts(_ scalar: FieldType.ScalarType) -> Bool {
        switch self {
        case .asset: scalar == .asset
        case .bytes: scalar == .bytes
        case .double, .number(preferred: .double?): scalar == .double || scalar == .int64
        case .int64, .number(preferred: .int64?): scalar == .int64
        case .location: scalar == .location
        case .reference: scalar == .reference
        case .string: scalar == .string
        case .timestamp: scalar == .timestamp || scalar == .int64
        case .number(preferred: nil): scalar == .int64 || scalar == .double
        case .encrypted(let plain): scalar == .bytes || Primitive.plain[plain.rawValue].map { $0.accepts(scalar) } == true
        }
    }
}
