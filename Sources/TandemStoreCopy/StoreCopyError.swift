/// Why `tandem migrate` stopped. Nothing was written to the target's database when it is
/// thrown (its transaction rolls back), and files it had added are removed.
public struct StoreCopyError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The source is missing or not a Tandem store.
        case source
        /// The target holds data and `--force` was not given, or has another schema version.
        case refused
        /// The two schemas differ (a table or column on one side only, or of another kind).
        case schema
        /// A value one side cannot hold.
        case value
        /// Counts, checksums, identity positions or files differ after the copy.
        case verification
    }

    public var kind: Kind
    public var message: String
    public var description: String { message }

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
