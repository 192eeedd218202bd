/// Named limits, each returned as a clear error when exceeded (DESIGN.md §6).
public enum Limits {
    /// Operations in one `records/modify` or `zones/modify` request (CloudKit Web Services limits).
    public static let operationsPerRequest = 200
    /// Records returned by one `records/query` or change fetch (default and maximum `resultsLimit`).
    public static let resultsPerResponse = 200
    /// Encoded size of one record's fields, assets excluded: 1 MiB.
    public static let recordBytes = 1 << 20
    /// Largest JSON request body: 2 MiB (DESIGN.md §3).
    public static let jsonBodyBytes = 2 << 20
    /// Largest asset: 50 MiB (decisions D11).
    public static let assetBytes = 50 << 20
    /// Lifetime of an asset upload URL: 15 minutes (decisions D11).
    public static let assetUploadSeconds: Int64 = 15 * 60
    /// Tokens in one `assets/upload` request.
    public static let assetTokensPerRequest = 200
    /// Record and zone names: 1–255 printable ASCII characters (decisions D12).
    public static let nameLength = 255
    /// Filters in one query (Tandem's limit; SQLite's expression depth is 1,000).
    public static let filtersPerQuery = 64
    /// Sort descriptors in one query.
    public static let sortsPerQuery = 16
    /// Values in one filter's list (`IN`, `NOT_IN`, `LIST_CONTAINS_ANY` and the like): past it
    /// the query is `BAD_REQUEST` (Tandem's limit; CloudKit documents none). The store binds
    /// a list as one value, so this bounds the work of one filter, not the SQL prepared.
    public static let valuesPerFilter = 1000
    /// Values of every filter's list added up over one query: past it the query is
    /// `BAD_REQUEST`. Without it 64 filters of 1,000 values each (65,536 bound parameters once
    /// padded) cost 0.5–0.8 s of CPU and hundreds of MiB of SQLite working memory per query.
    public static let valuesPerQuery = 2000
    /// Values of LIST_CONTAINS_ALL / NOT_LIST_CONTAINS_ALL filters plus tokens of
    /// CONTAINS_ALL_TOKENS filters, added up over one query (each is its own subquery).
    public static let valuesPerAllFilter = 200
    /// DELETE_SELF references pointing at one target (CloudKit limits page).
    public static let deleteSelfReferencesPerTarget = 750
    /// Participants per share, the owner included (decisions D8; configurable per server).
    public static let participantsPerShare = 100
    /// Records per page of a change feed (changes/zone, records/changes): 200 unless the client
    /// asks for up to 1,000, so a client far behind catches up in fewer round trips (Tandem).
    public static let changesPerResponse = 1000
    /// Encoded payload of one group session message, framing excluded: 256 KiB (decisions D32).
    public static let sessionMessageBytes = 256 << 10
    /// Participants in one group session, the local one included (decisions D33; configurable).
    public static let participantsPerSession = 32
    /// One journal attachment: 100 MiB (decisions D37).
    public static let journalAttachmentBytes = 100 << 20
    /// One key's value in a session's state store: 256 KiB, as a message (decisions G8).
    public static let sessionStateValueBytes = 256 << 10
    /// Keys in one session's state store (decisions G8).
    public static let sessionStateKeys = 1000
}
