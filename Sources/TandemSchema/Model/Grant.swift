/// `GRANT right, ... TO role` inside a record type (spec §5.2). Grants govern the public
/// database only: private data is its owner's and shared data follows share permissions.
public struct Grant: Sendable, Hashable {
    public var rights: Rights
    public var role: String

    public init(_ rights: Rights, to role: String) {
        self.rights = rights
        self.role = role
    }
}

/// The rights a grant gives: `READ` records, `CREATE` records, `WRITE` (change) records.
public struct Rights: KeywordOptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = Rights(rawValue: 1)
    public static let create = Rights(rawValue: 2)
    public static let write = Rights(rawValue: 4)

    /// Each right with its keyword, in the order the printer writes them.
    public static let keywords: [(member: Rights, keyword: String)] = [
        (.read, "READ"), (.create, "CREATE"), (.write, "WRITE"),
    ]
}
