/// Why a record does not fit the schema: the first problem found, with a reason that names
/// the record type and field, ready for a `BAD_REQUEST` body (issue 6, production
/// enforcement).
public struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The record's type is not in the schema.
        case unknownRecordType
        /// The record has a field its type does not declare.
        case unknownField
        /// The record sets one of the `___` system fields, which only the server sets.
        case systemField
        /// The field's value is not of the declared type.
        case wrongType
    }

    public var kind: Kind
    public var recordType: String
    /// The field at fault; nil for `unknownRecordType`.
    public var field: String?
    /// A sentence naming the record type and field (`field 'stars' of record type 'Note' is INT64, not STRING`).
    public var reason: String

    public init(kind: Kind, recordType: String, field: String?, reason: String) {
        self.kind = kind
        self.recordType = recordType
        self.field = field
        self.reason = reason
    }

    public var description: String { reason }
}
