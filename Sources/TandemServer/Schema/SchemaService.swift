import Foundation
import TandemCore
public import TandemSchema
public import TandemStore

/// Importing, exporting and promoting a container's schemas (issue 6), for `tandem schema`
/// and the admin endpoint (`SchemaRoutes`).
///
/// An import replaces the environment's schema with the file and makes the indexes follow it:
/// expression indexes of SORTABLE fields are built by one `CREATE INDEX` each inside the
/// import's transaction; `field_index` rows and full-text entries of existing records are
/// rewritten afterwards in batches of `rebuildBatch` records, one write transaction each, so
/// writers wait at most one batch and readers (WAL) never wait (decision SC5).
public struct SchemaService: Sendable {
    public let store: any Store
    /// Records whose index entries one rebuild transaction rewrites.
    public var rebuildBatch = 1000

    public init(store: any Store) { self.store = store }

    /// What an import or promotion did.
    public struct Outcome: Sendable {
        /// Every change from the previous schema, data-losing ones included when forced.
        public var changes: [SchemaChange]
        /// Records whose index entries were rewritten, by record type.
        public var reindexed: [String: Int]
    }

    /// Parses `text` and makes it the schema of `environment`.
    ///
    /// Changes that could lose data (removing a type or field, changing a field's type) are
    /// refused unless `force`, in both environments and from the CLI and HTTP alike (spec §5.2,
    /// "Publishing"; decision F2 extends it to development). Stored records are never deleted.
    /// - Throws: `BAD_REQUEST` with `FILE:LINE:COLUMN: message` for a file that does not parse,
    ///   for names or counts past ``SchemaLimits``, or listing the data-losing changes;
    ///   `NOT_FOUND` for an unknown container.
    public func importSchema(_ text: String, file: String, container: String, environment: Environment,
                             force: Bool = false) throws -> Outcome {
        let schema: Schema
        do {
            schema = try Schema(parsing: text, file: file)
        } catch {
            throw CloudKitError.badRequest(error.description)
        }
        return try install(schema, container: container, environment: environment, force: force)
    }

    /// The environment's schema as `.ckdb` text: what was imported, or inferred just in time in
    /// development. An environment without a schema exports as an empty `DEFINE SCHEMA`.
    public func export(container: String, environment: Environment) throws -> String {
        try requireContainer(container)
        return try store.read { try SchemaRegistry.shared.schema($0, container: container, environment: environment) }?.ckdb
            ?? Schema().ckdb
    }

    /// Copies the development schema to production (CloudKit's "Deploy Schema Changes").
    /// - Throws: `BAD_REQUEST` listing data-losing changes unless `force`.
    public func promote(container: String, force: Bool = false) throws -> Outcome {
        try requireContainer(container)
        let development = try store.read { try SchemaRegistry.shared.schema($0, container: container, environment: .development) }
        return try install(development ?? Schema(), container: container, environment: .production, force: force)
    }

    private func install(_ schema: Schema, container: String, environment: Environment, force: Bool) throws -> Outcome {
        try requireContainer(container)
        try SchemaLimits.check(schema)
        let now = Clock.milliseconds()
        let (changes, rebuild) = try store.write { tx in
            let old = try SchemaRegistry.shared.schema(tx, container: container, environment: environment) ?? Schema()
            let changes = old.changes(to: schema)
            let losing = changes.filter(\.losesData)
            if !force && !losing.isEmpty {
                let scope = environment == .production ? "production data" : "data (development too, decision F2)"
                throw CloudKitError.badRequest("refused: \(losing.count) of the changes could lose \(scope); nothing was changed (force to apply):\n"
                                               + losing.map { "  \($0)" }.joined(separator: "\n"))
            }
            return (changes, try SchemaRegistry.put(schema, tx, container: container, environment: environment, at: now))
        }
        var reindexed: [String: Int] = [:]
        for type in rebuild.sorted() {
            var after: Int64 = 0
            var count = 0
            let batch = rebuildBatch
            while let done = try store.write({ [after] tx in
                try tx.rebuildIndexes(container: container, environment: environment, recordType: type, after: after, limit: batch)
            }) {
                count += done.count
                after = done.last
            }
            reindexed[type] = count
        }
        return Outcome(changes: changes, reindexed: reindexed)
    }

    private func requireContainer(_ id: String) throws {
        guard try store.read({ try $0.containerExists(id) }) else {
            throw CloudKitError(.notFound, "no container '\(id)' (create it with: tandem container create \(id))")
        }
    }
}
