internal import Foundation
internal import TandemPostgres
internal import TandemStore
internal import TandemStorePostgres
internal import TandemStoreSQLite

/// Copies a whole Tandem store between SQLite and PostgreSQL (`tandem migrate`, issue 19;
/// decisions P40–P43): every table, every identity position, every file of the data directory.
///
/// ```swift
/// let summary = try StoreCopy.run(from: .directory("/srv/tandem-data"),
///                                 to: .postgres(url: "postgres://tandem@db/tandem", directory: "/srv/tandem-files"),
///                                 force: false) { line in print(line) }
/// ```
///
/// The target's rows are written in one transaction, verified inside it (row counts, a checksum
/// per table computed the same way on both sides: ``TableChecksum``, identity positions), and
/// committed only when everything matches; files are copied first and checked by SHA-256.
/// Both sides then start a new generation of the store (decisions P78): change tokens issued
/// before the copy stay valid on both, and a token one side issues afterwards is expired on the
/// other, whichever of them is served on.
/// Tables come from each side's schema, and a table or column on one side only stops the copy.
public enum StoreCopy {
    /// One side of a copy.
    public enum Endpoint: Sendable, Equatable {
        /// A SQLite store: the directory of `tandem.sqlite`, and the directory of its files
        /// (assets, avatars, `secret.key`, the journal) when the server's `--data` was another
        /// one (`tandem serve --store DIR1 --data DIR2`; P58); nil: the same directory.
        case directory(String, files: String? = nil)
        /// A PostgreSQL database (libpq's URL) and the directory holding its store's files
        /// (assets, avatars, `secret.key`, the journal: P20).
        case postgres(url: String, directory: String)

        /// Every directory of this side: the store's and its files'.
        var directories: [String] {
            switch self {
            case .directory(let path, let files): [path, files ?? path]
            case .postgres(_, let path): [path]
            }
        }

        var fileDirectory: String {
            switch self {
            case .directory(let path, let files): files ?? path
            case .postgres(_, let path): path
            }
        }
    }

    /// What a finished copy moved.
    public struct Summary: Sendable {
        /// Tables in the schema (empty ones included).
        public var tables: Int
        /// Rows copied, all tables together.
        public var rows: Int
        /// Rows of each table.
        public var rowsByTable: [String: Int]
        /// Files copied, and their bytes.
        public var files: Int
        public var bytes: Int
        /// Wall time of the whole copy, verification included, in seconds.
        public var seconds: Double
    }

    /// Rows per batch read from the source (and per progress line).
    public static let batchSize = 10_000

    /// Copies `source` into `target`.
    ///
    /// - Parameters:
    ///   - force: write into a target that holds rows or files: its rows are deleted in the
    ///     copy's transaction (so they stay if the copy fails), files of the same path are
    ///     overwritten and other files are left. A target at another schema version is refused
    ///     even then.
    ///   - progress: one line at a time (per batch of ``batchSize`` rows, per table, per 100 files).
    /// - Throws: ``StoreCopyError``: `source` (missing, unreachable, not at this build's schema
    ///   version), `refused` (target not empty without `force`, or at another version),
    ///   `schema`, `value`, `verification`; ``TandemPostgres/PostgresError`` and
    ///   ``TandemSQLite/SQLiteError`` from the databases. Nothing stays written when it throws.
    public static func run(from source: Endpoint, to target: Endpoint, force: Bool,
                           progress: (String) -> Void) throws -> Summary {
        // Servers of either side hold their directories' lock; the copy holds them against servers starting.
        do {
            return try DataDirectoryLock.whileExclusive(source.directories + target.directories) {
                try copyHoldingTheDirectories(from: source, to: target, force: force, progress: progress)
            }
        } catch let busy as DataDirectoryLock.Busy {
            throw StoreCopyError(.refused, busy.description)
        }
    }

    private static func copyHoldingTheDirectories(from source: Endpoint, to target: Endpoint, force: Bool,
                                                  progress: (String) -> Void) throws -> Summary {
        let clock = ContinuousClock()
        let started = clock.now
        guard source != target, source.fileDirectory != target.fileDirectory || (isPostgres(source) && isPostgres(target)),
              sqliteFile(source) == nil || sqliteFile(source) != sqliteFile(target) else {
            throw StoreCopyError(.refused, "the source and the target are the same place")
        }
        let sourceDatabase = try open(source, create: false)
        try refuseServers(on: sourceDatabase, side: "source")
        if case .postgres(_, let directory) = source, !FileManager.default.fileExists(atPath: directory) {
            throw StoreCopyError(.source, "no directory \(directory) (the PostgreSQL store's files: --from-data)")
        }
        if case .directory(_, let files?) = source, !FileManager.default.fileExists(atPath: files) {
            throw StoreCopyError(.source, "no directory \(files) (the store's files: --from-data)")
        }
        if isPostgres(source) && isPostgres(target) {
            // Two spellings of one database (localhost and 127.0.0.1, a socket and TCP) would
            // clear the source inside the copy's own transaction and wait on itself (P59).
            let targetDatabase = try open(target, create: false)
            if let here = try sourceDatabase.identity(), here == (try targetDatabase.identity()) {
                throw StoreCopyError(.refused, "the source and the target are the same PostgreSQL database (the same cluster and database OID, under two URLs)")
            }
        }
        if !FileManager.default.fileExists(atPath: source.fileDirectory + "/secret.key") {
            progress("migrate: note: \(source.fileDirectory) holds no secret.key: change tokens and signed URLs of a server that used "
                     + "another directory for --data will be refused after the move; --from-data DIR names the directory it used")
        }
        let version = SQLiteStore.schemaVersion
        let sourceVersion = try sourceDatabase.reading { try sourceDatabase.schemaVersion() }
        guard let sourceVersion else { throw StoreCopyError(.source, "\(sourceDatabase.label) has no Tandem schema") }
        guard sourceVersion == version else {
            throw StoreCopyError(.source, "\(sourceDatabase.label) is at schema version \(sourceVersion), this build's is \(version): "
                                 + "open it once with this build's tandem (it migrates on open), then migrate")
        }
        // Files decide emptiness before anything is created, so a refusal writes nothing.
        let existingFiles = DataFiles.list(target.fileDirectory)
        // A PostgreSQL store's files beside a SQLite store: the marker written after the copy
        // would lock that store out (review 49), --force or not.
        if case .postgres(_, let directory) = target, FileManager.default.fileExists(atPath: directory + "/tandem.sqlite") {
            throw StoreCopyError(.refused, "refusing to write into \(directory): it holds a SQLite store (tandem.sqlite); "
                                 + "give --to-data a directory of its own for the PostgreSQL store's files")
        }
        // Nor beside another PostgreSQL store's: its secret.key would be replaced (review 51).
        if case .postgres(let url, let directory) = target, let other = PostgresMarker.url(in: directory), other != PostgresURL.redacted(url) {
            throw StoreCopyError(.refused, "refusing to write into \(directory): it is the data directory of another PostgreSQL store "
                                 + "(\(other)); give that store's URL as it is written there, or --to-data a directory of its own, --force or not")
        }
        // And a SQLite store never into a PostgreSQL server's data directory: --force replaced that
        // server's secret.key and took its marker (review 50).
        if case .directory = target, let directory = target.directories.first(where: { PostgresMarker.url(in: $0) != nil }) {
            throw StoreCopyError(.refused, "refusing to write into \(directory): it is the data directory of a PostgreSQL store "
                                 + "(\(PostgresMarker.url(in: directory) ?? "")); give a directory of its own, --force or not")
        }
        if !existingFiles.isEmpty && !force {
            let store = sqliteFile(target).map { FileManager.default.fileExists(atPath: $0) } == true ? " and a SQLite store (tandem.sqlite)" : ""
            throw StoreCopyError(.refused, "refusing to write into \(target.fileDirectory): it holds \(existingFiles.count) file\(existingFiles.count == 1 ? "" : "s") "
                                 + "(\(existingFiles.prefix(3).joined(separator: ", "))…)\(store); --force replaces the target's data")
        }
        let targetDatabase = try open(target, create: true)
        try refuseServers(on: targetDatabase, side: "target")
        var undo = DataFiles.Undo()
        do {
            let summary = try sourceDatabase.reading {
                // The source's snapshot begins with this read; its new generation, committed from
                // another connection, is not in the snapshot the copy reads.
                _ = try sourceDatabase.generation()
                markParted(source, progress: progress)
                return try targetDatabase.writing {
                    try copy(sourceDatabase, targetDatabase, source: source, target: target, version: version,
                             force: force, existingFiles: existingFiles.count, undo: &undo, progress: progress)
                }
            }
            // Committed: nothing from here on takes the copy back.
            undo.keep()
            progress("migrate: committed")
            do {
                if let line = try targetDatabase.refreshStatistics() { progress(line) }
            } catch {
                progress("migrate: note: ANALYZE failed (\(error)); run it before serving")
            }
            mark(target)
            let seconds = Double((clock.now - started).components.attoseconds) / 1e18 + Double((clock.now - started).components.seconds)
            let result = Summary(tables: summary.tables, rows: summary.rows, rowsByTable: summary.rowsByTable,
                                 files: summary.files, bytes: summary.bytes, seconds: seconds)
            progress("migrate: done: \(result.rows) rows of \(result.tables) tables and \(result.files) files (\(result.bytes) bytes) "
                     + "in \(String(format: "%.2f", seconds)) s, \(Int(Double(result.rows) / max(seconds, 0.001))) rows/s; "
                     + "counts, checksums, identity positions and files verified")
            return result
        } catch {
            undo.takeBack()
            throw error
        }
    }

    /// A new generation for the source, as a copy of it is made (P78). Without it, tokens the
    /// source issued from now on would be read by the copy as positions in its own history.
    /// Started before the copy commits, from a connection of its own, after the copy's snapshot
    /// of the source began (review 51: started after the commit, a copy stopped in between left
    /// the source at the generation the copy descends from). A copy that fails after it has
    /// changed nothing but that: the source's earlier tokens stay valid.
    private static func markParted(_ source: Endpoint, progress: (String) -> Void) {
        do {
            let database = try open(source, create: false)
            try database.writing { try database.startGeneration(newGeneration(), at: now()) }
        } catch {
            progress("migrate: note: could not start a new generation in the source (\(error)): change tokens it issues from "
                     + "now on will be accepted by the copy as if they were its own; serve only one of the two")
        }
    }

    /// Refuses a database Tandem servers are connected to (PostgreSQL; review 47).
    private static func refuseServers(on database: any CopyDatabase, side: String) throws {
        let servers = try database.servers()
        guard servers == 0 else {
            throw StoreCopyError(.refused, "\(servers) other connection\(servers == 1 ? "" : "s") \(servers == 1 ? "is" : "are") open on the \(side), "
                                 + "\(database.label) (a Tandem server's, or another client's): stop every node and client using it before migrating")
        }
    }

    /// A random positive generation, never 0 (what tokens from before generations read as).
    private static func newGeneration() -> Int64 { Int64.random(in: 1...Int64.max) }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// The SQLite side's database file, as a standardised path; nil for PostgreSQL.
    private static func sqliteFile(_ endpoint: Endpoint) -> String? {
        guard case .directory(let path, _) = endpoint else { return nil }
        return URL(fileURLWithPath: path + "/tandem.sqlite").standardizedFileURL.path
    }

    private static func isPostgres(_ endpoint: Endpoint) -> Bool {
        if case .postgres = endpoint { return true }
        return false
    }

    /// The marker of a PostgreSQL store's file directory (P57): left in a PostgreSQL target's,
    /// so that admin commands there without `--store` are refused. (A SQLite target never has
    /// one: such a directory is refused.)
    private static func mark(_ target: Endpoint) {
        switch target {
        case .postgres(let url, let directory):
            try? PostgresMarker.write(PostgresURL.redacted(url), in: directory)
        case .directory(let path, let files):
            for directory in [path, files ?? path] { unlink(directory + "/" + PostgresMarker.fileName) }
        }
    }

    private static func open(_ endpoint: Endpoint, create: Bool) throws -> any CopyDatabase {
        switch endpoint {
        case .directory(let path, _): return try SQLiteCopyDatabase(directory: path, create: create)
        case .postgres(let url, _): return try PostgresCopyDatabase(url: url)
        }
    }

    /// The copy itself, inside the source's snapshot and the target's transaction.
    private static func copy(_ from: any CopyDatabase, _ to: any CopyDatabase, source: Endpoint, target: Endpoint, version: Int,
                             force: Bool, existingFiles: Int, undo: inout DataFiles.Undo, progress: (String) -> Void) throws -> Summary {
        let clock = ContinuousClock()
        if try to.schemaVersion() == nil { try to.createSchema() }
        let targetVersion = try to.schemaVersion()
        guard targetVersion == version else {
            throw StoreCopyError(.refused, "refusing to write into \(to.label): it is at schema version \(targetVersion ?? 0), "
                                 + "the source at \(version) (--force does not change that)")
        }
        let tables = try matchingTables(from, to)
        // Migrations seed some rows (the feed clock's): data is what a fresh store lacks.
        let fresh = try freshCounts()
        let rowsThere = try tables.reduce(0) { $0 + max(0, (try to.count($1)) - (fresh[$1.name] ?? 0)) }
        if (rowsThere > 0 || existingFiles > 0) && !force {
            throw StoreCopyError(.refused, "refusing to write into \(to.label): it holds \(rowsThere) rows; --force replaces the target's data")
        }
        if rowsThere > 0 { progress("migrate: --force: deleting the \(rowsThere) rows of \(to.label)") }
        try to.clear(tables)

        // Files first, beside their places: a failure removes them and rolls the rows back.
        let files = try DataFiles.stage(from: source.fileDirectory, to: target.fileDirectory, undo: &undo) { done, total, bytes in
            if done % 100 == 0 || done == total { progress("migrate: files \(done)/\(total), \(bytes) bytes") }
        }

        var checksums: [String: TableChecksum] = [:]
        var rowsByTable: [String: Int] = [:]
        let copyStart = clock.now
        let ordered = try to.insertionOrder(tables)
        try to.bulkLoading {
            for table in ordered {
                let total = try from.count(table)
                var checksum = TableChecksum()
                let tableStart = clock.now
                try to.insert(table) { sink in
                    // The source reads the next batch while the target writes this one (P65).
                    try ScanAhead.scan(from, table, batchSize: batchSize) { batch in
                        for row in batch { checksum.add(row) }
                        try sink(batch)
                        if total > batchSize {
                            progress("migrate: \(table.name) \(checksum.rows)/\(total) rows, \(rate(checksum.rows, since: tableStart, clock)) rows/s")
                        }
                    }
                }
                if total > 0 { progress("migrate: \(table.name) done: \(checksum.rows) rows, \(rate(checksum.rows, since: tableStart, clock)) rows/s") }
                checksums[table.name] = checksum
                rowsByTable[table.name] = checksum.rows
            }
        }
        let rows = rowsByTable.values.reduce(0, +)
        progress("migrate: copied \(rows) rows, \(rate(rows, since: copyStart, clock)) rows/s; verifying")

        let positions = try from.positions(tables)
        try to.setPositions(positions, tables: tables)
        try verify(tables, to, checksums: checksums, positions: positions)
        try to.startGeneration(newGeneration(), at: now())
        // Verified: the files go into place as the rows commit (DataFiles.Undo).
        try undo.place()
        return Summary(tables: tables.count, rows: rows, rowsByTable: rowsByTable, files: files.count,
                       bytes: files.reduce(0) { $0 + $1.bytes }, seconds: 0)
    }

    /// Rows per table of a store this build has just created (in a scratch directory).
    private static func freshCounts() throws -> [String: Int] {
        let scratch = NSTemporaryDirectory() + "tandem-migrate-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let database = try SQLiteCopyDatabase(directory: scratch, create: true)
        return try database.reading {
            Dictionary(uniqueKeysWithValues: try database.tables().map { ($0.name, try database.count($0)) })
        }
    }

    /// The tables both sides have, or a ``StoreCopyError/Kind/schema`` error naming what differs.
    private static func matchingTables(_ from: any CopyDatabase, _ to: any CopyDatabase) throws -> [CopyTable] {
        let source = Dictionary(uniqueKeysWithValues: try from.tables().map { ($0.name, $0) })
        let target = Dictionary(uniqueKeysWithValues: try to.tables().map { ($0.name, $0) })
        let onlySource = Set(source.keys).subtracting(target.keys).sorted()
        let onlyTarget = Set(target.keys).subtracting(source.keys).sorted()
        guard onlySource.isEmpty && onlyTarget.isEmpty else {
            var parts: [String] = []
            if !onlySource.isEmpty { parts.append("only in \(from.label): \(onlySource.joined(separator: ", "))") }
            if !onlyTarget.isEmpty { parts.append("only in \(to.label): \(onlyTarget.joined(separator: ", "))") }
            throw StoreCopyError(.schema, "the schemas differ: tables " + parts.joined(separator: "; "))
        }
        for (name, table) in source where table.columns != target[name]!.columns {
            let describe = { (t: CopyTable) in t.columns.map { "\($0.name) \($0.kind.rawValue)" }.joined(separator: ", ") }
            throw StoreCopyError(.schema, "the schemas differ: \(name) is (\(describe(table))) in \(from.label), (\(describe(target[name]!))) in \(to.label)")
        }
        return source.keys.sorted().map { source[$0]! }
    }

    /// Counts, checksums and identity positions of the target against what was read.
    private static func verify(_ tables: [CopyTable], _ to: any CopyDatabase, checksums: [String: TableChecksum],
                               positions: [String: Int64]) throws {
        for table in tables {
            let expected = checksums[table.name] ?? TableChecksum()
            // The checksum counts the rows it took in, so the scan is the count too; the target
            // reads the next batch on a thread of its own while this one is hashed (P70).
            var checksum = TableChecksum()
            try ScanAhead.scan(to, table, batchSize: batchSize) { batch in for row in batch { checksum.add(row) } }
            guard checksum == expected else {
                throw StoreCopyError(.verification, "\(table.name) differs after the copy: \(checksum.rows) rows, checksum \(checksum.hex); "
                                     + "the source has \(expected.rows) rows, checksum \(expected.hex)")
            }
        }
        let after = try to.positions(tables)
        for table in tables where table.identity != nil {
            guard try to.keepsPosition(table) else { continue }
            let wanted = positions[table.name] ?? 0
            guard let there = after[table.name], there >= wanted else {
                throw StoreCopyError(.verification, "\(table.name)'s identity is at \(after[table.name] ?? 0) after the copy, the source's at \(wanted)")
            }
        }
    }

    private static func rate(_ rows: Int, since start: ContinuousClock.Instant, _ clock: ContinuousClock) -> Int {
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Int(Double(rows) / max(seconds, 0.001))
    }
}
