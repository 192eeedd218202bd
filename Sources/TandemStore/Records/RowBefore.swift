public import TandemCore

/// What a record's row held before a save, as the caller read it in the save's own transaction
/// (`StoreWriting.putRecord(_:zone:sequence:membership:indexing:before:)`, decisions P76).
public enum RowBefore: Sendable, Equatable {
    /// No row: the save creates the record.
    case absent
    /// A row, in the hierarchy of the share named `membership` (nil: none).
    case present(membership: String?)

    /// The row before as `found` reads it (`recordWithMembership`, `zoneAndRecord`).
    public init(_ found: (record: Record, membership: String?)?) {
        self = found.map { .present(membership: $0.membership) } ?? .absent
    }
}
