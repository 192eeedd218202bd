/// One side of a copy, as the copier sees it: a schema of ``CopyTable``s, rows read in batches,
/// and the identity positions. Implemented for SQLite (``SQLiteCopyDatabase``) and PostgreSQL
/// (``PostgresCopyDatabase``); every method runs inside ``reading(_:)`` or ``writing(_:)``.
protocol CopyDatabase: AnyObject {
    /// Names the side in messages: "tandem.sqlite in DIR", "the PostgreSQL database".
    var label: String { get }

    /// The schema version, nil when the database has no Tandem schema yet.
    func schemaVersion() throws -> Int?

    /// Every table of the schema, read from the database (not a kept list).
    func tables() throws -> [CopyTable]

    /// Rows in `table`.
    func count(_ table: CopyTable) throws -> Int

    /// Reads every row of `table` (values in its column order, normalised to the column's
    /// kind) in batches of up to `batchSize`, in no particular order.
    func scan(_ table: CopyTable, batchSize: Int, _ body: ([[CopyValue]]) throws -> Void) throws

    /// The last number each identity has handed out, by table (at least the largest value in
    /// the column): the next row gets a larger one.
    func positions(_ tables: [CopyTable]) throws -> [String: Int64]

    /// Whether `table`'s identity keeps a position of its own, beyond its largest value
    /// (PostgreSQL's identities, SQLite's AUTOINCREMENT tables).
    func keepsPosition(_ table: CopyTable) throws -> Bool

    /// Runs `body` on one consistent snapshot.
    func reading<T>(_ body: () throws -> T) throws -> T

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    func writing<T>(_ body: () throws -> T) throws -> T

    /// Creates this build's schema in a database that has none (inside ``writing(_:)``).
    func createSchema() throws

    /// `tables` in an order that inserting them one after another keeps the foreign keys.
    func insertionOrder(_ tables: [CopyTable]) throws -> [CopyTable]

    /// Runs `body` (which inserts every table) the way this database loads in bulk fastest,
    /// with the same constraints holding when it returns.
    func bulkLoading(_ body: () throws -> Void) throws

    /// Deletes every row of `tables` (`--force`).
    func clear(_ tables: [CopyTable]) throws

    /// Inserts rows into `table`: `feed` is called once and hands batches to its argument.
    func insert(_ table: CopyTable, _ feed: (_ batch: ([[CopyValue]]) throws -> Void) throws -> Void) throws

    /// Moves each identity of `tables` to at least `positions[table]` (and past the rows it
    /// holds), so new rows never reuse a number handed out before the copy.
    func setPositions(_ positions: [String: Int64], tables: [CopyTable]) throws

    /// The store's generation now (`feed_clock.generation`); inside ``reading(_:)``, its first
    /// read begins the snapshot.
    func generation() throws -> Int64

    /// Starts a new generation of the store (inside ``writing(_:)``): change tokens issued from
    /// now on carry it, and those issued under the generations it descends from stay valid
    /// (decisions P78).
    func startGeneration(_ generation: Int64, at time: Int64) throws

    /// Other clients' connections to this database, Tandem servers' among them (PostgreSQL's
    /// `pg_stat_activity`, any machine): a copy is refused while there are any. 0 for SQLite, whose servers hold the
    /// data directory's lock instead.
    func servers() throws -> Int

    /// What names this database whatever URL reached it, for refusing a copy onto itself; nil
    /// where a path comparison decides that instead (SQLite).
    func identity() throws -> String?

    /// After COMMIT: brings the planner's statistics up to date with the loaded rows.
    /// - Returns: a progress line saying what ran, or nil.
    func refreshStatistics() throws -> String?
}
