/// A container environment's schema as stored: its `.ckdb` text and a random `etag` that
/// changes with every write (the key under which services cache the parsed schema).
public struct StoredSchema: Sendable, Hashable {
    public var text: String
    public var etag: String
    public var updatedAt: Int64

    public init(text: String, etag: String, updatedAt: Int64) {
        self.text = text
        self.etag = etag
        self.updatedAt = updatedAt
    }
}

/// The indexes one field gets, from its schema options (spec §5.2).
public struct IndexOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// Rows in `field_index` (equality, membership, prefix and range filters).
    public static let queryable = IndexOptions(rawValue: 1)
    /// Rows in `field_index` too, plus an expression index ordering the records when `ordered`.
    public static let sortable = IndexOptions(rawValue: 2)
    /// The field's tokens in the full-text index (`field_search`).
    public static let searchable = IndexOptions(rawValue: 4)
}

/// What the store indexes for one field of one record type.
public struct IndexedField: Sendable, Hashable {
    public var recordType: String
    public var field: String
    public var options: IndexOptions
    /// True for a SORTABLE single value that orders as stored (string, number, timestamp): it
    /// gets an expression index on `records`, so a sort walks the index instead of sorting.
    public var ordered: Bool

    public init(recordType: String, field: String, options: IndexOptions, ordered: Bool = false) {
        self.recordType = recordType
        self.field = field
        self.options = options
        self.ordered = ordered
    }
}

/// Reads of schemas and admin tokens.
public protocol SchemaReading {
    func schema(container: String, environment: Environment) throws -> StoredSchema?
    /// The etag alone: a cheap check that a cached parse is current.
    func schemaETag(container: String, environment: Environment) throws -> String?
    /// The admin token with this SHA-256, revoked or expired ones included; nil when unknown.
    func adminToken(hash: [UInt8]) throws -> StoredAdminToken?
    /// Every admin token, oldest first.
    func adminTokens() throws -> [StoredAdminToken]
}

/// Writes of schemas and admin tokens, inside a transaction.
public protocol SchemaWriting: SchemaReading {
    /// Stores `text` and what to index, creating and dropping the expression indexes of ordered
    /// fields (each one `CREATE INDEX` statement). Returns the record types whose existing
    /// records' `field_index` rows or full-text entries no longer match (`rebuildIndexes`).
    /// Without `createSortIndexes` (just-in-time additions), no new expression index is built:
    /// fields keep the ones they had, and new sortable fields sort through `field_index`.
    func putSchema(_ text: String, etag: String, fields: [IndexedField], container: String, environment: Environment,
                   createSortIndexes: Bool, at time: Int64) throws -> Set<String>
    /// Rewrites the index entries of at most `limit` records of `recordType` after record key
    /// `after`, in key order; returns the last key done, how many records, and the names of
    /// those whose SEARCHABLE fields are over the full-text limit (`FieldIndexer.searchBodyLimit`:
    /// indexed without a full-text entry; decisions P80); nil when none were left.
    func rebuildIndexes(container: String, environment: Environment, recordType: String, after: Int64,
                        limit: Int) throws -> (last: Int64, count: Int, unsearchable: [String])?
    /// Adds an admin token that stops working at `expiresAt` (nil: never).
    func addAdminToken(hash: [UInt8], expiresAt: Int64?, at time: Int64) throws
    /// Revokes the admin token `id` (16 hex digits); false when unknown or already revoked.
    func revokeAdminToken(id: String, at time: Int64) throws -> Bool
}
