public import TandemCore

/// A record's row as a write's first read found it (decisions P76): absent, with the key its
/// insert will take, or present, with its key and share membership. Given to
/// `StoreWriting.putRecord(_:zone:sequence:membership:indexing:before:)` in the same
/// transaction, it lets PostgreSQL send the save without waiting for its answer.
public enum RowBefore: Sendable, Equatable {
    /// No row: the save inserts one with `key`, reserved for it by the read.
    case absent(key: Int64)
    /// The row `key`, in the hierarchy of the share named `membership` (nil: none).
    case present(key: Int64, membership: String?)

    /// The row's key, now or once saved.
    public var key: Int64 {
        switch self {
        case .absent(let key), .present(let key, _): key
        }
    }
}
