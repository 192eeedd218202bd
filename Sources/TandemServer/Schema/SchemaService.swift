import Foundation
import TandemCore
import TandemCrypto
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
        /// Records left without a full-text entry, by record type: their SEARCHABLE fields are
        /// over the full-text limit (decisions P80). Saved smaller, they are indexed.
        public var unsearchable: [String: [String]] = [:]
    }

    /// Parses `text` and makes it the schema of `environment`.
    ///
    /// Changes that could lose data (removing a type or field, changing a field's type) are
    /// refused unless `force`, in both environments and from the CLI and HTTP alike (spec §5.2,
    /// "Publishing"; decision F2 extends it to development). Stored records are never deleted.
    ///
    /// `basedOn`: the ``fingerprint(_:)`` of the stored schema the text was edited from (the
    /// console's `.ckdb` page, decisions C60); when the stored schema is another by now, the
    /// import is refused with `CONFLICT` and nothing changes, so a save from an old page cannot
    /// silently undo what was saved since. Nil: no check (the CLI and the admin endpoint replace
    /// the schema with the file, whatever it was).
    /// - Throws: `BAD_REQUEST` with `FILE:LINE:COLUMN: message` for a file that does not parse,
    ///   for names or counts past ``SchemaLimits``, or listing the data-losing changes;
    ///   `CONFLICT` for a stale `basedOn`; `NOT_FOUND` for an unknown container.
    public func importSchema(_ text: String, file: String, container: String, environment: Environment,
                             force: Bool = false, basedOn: String? = nil) throws -> Outcome {
        let schema: Schema
        do {
            schema = try Schema(parsing: text, file: file)
        } catch {
            throw CloudKitError.badRequest(error.description)
        }
        return try install(container: container, environment: environment, force: force) { old in
            // Text that says what is stored already changes nothing (a form sent twice), so it passes.
            if let basedOn, Self.fingerprint(old) != basedOn, Self.fingerprint(schema) != Self.fingerprint(old) {
                throw CloudKitError(.conflict, "the \(environment.rawValue) schema was changed after this text was loaded; nothing was saved")
            }
            return schema
        }
    }

    /// The SHA-256 (hex) of `schema` as printed (`.ckdb`): equal for equal schemas, whatever text
    /// they were imported from. Pages carry it to tell whether what they showed is still stored
    /// (decisions C60, C61).
    public static func fingerprint(_ schema: Schema) -> String { Digest.hex(Digest.sha256(Array(schema.ckdb.utf8))) }

    /// The fingerprint of a deployment: production's schema and development's, the two sides of
    /// the diff a person looked at before deploying (decisions C61).
    public static func fingerprint(production: Schema, development: Schema) -> String {
        Digest.hex(Digest.sha256(Array((fingerprint(production) + fingerprint(development)).utf8)))
    }

    /// Changes the environment's schema with `edit` and installs the result as importing its
    /// `.ckdb` text would: the edited schema is printed and parsed again, so the schema
    /// language's rules (unique names, system names, SEARCHABLE only on strings, grants to known
    /// roles), ``SchemaLimits`` and the data-losing check with `force` (decision F2) are the
    /// import's own. The edit runs inside the write transaction on the schema as stored, so two
    /// edits at once both apply. The console's schema forms use it (decisions C34).
    /// - Throws: `BAD_REQUEST` with the broken rule's message (no line and column: the text is
    ///   generated), for a name the language cannot write (a `"` or a line break), or
    ///   listing the data-losing changes; whatever `edit` throws; `NOT_FOUND` for an unknown
    ///   container.
    public func edit(container: String, environment: Environment, force: Bool = false,
                     _ edit: @escaping @Sendable (inout Schema) throws -> Void) throws -> Outcome {
        try install(container: container, environment: environment, force: force) { old in
            var schema = old
            try edit(&schema)
            // The printer writes any other name (quoted when it must be); the import's checks follow, in its order.
            let names = schema.roles + schema.recordTypes.flatMap { [$0.name] + $0.fields.map(\.name) }
            if let name = names.first(where: { $0.contains("\"") || $0.contains("\n") || $0.contains("\r") }) {
                throw CloudKitError.badRequest("name '\(name.prefix(40))' holds a double quote or a line break, which a .ckdb file cannot write")
            }
            do {
                return try Schema(parsing: schema.ckdb, file: "schema.ckdb")
            } catch let error as SchemaError {
                throw CloudKitError.badRequest(error.message)
            }
        }
    }

    /// The environment's schema as `.ckdb` text: what was imported, or inferred just in time in
    /// development. An environment without a schema exports as an empty `DEFINE SCHEMA`.
    public func export(container: String, environment: Environment) throws -> String {
        try requireContainer(container)
        return try store.read { try SchemaRegistry.shared.schema($0, container: container, environment: environment) }?.ckdb
            ?? Schema().ckdb
    }

    /// Copies the development schema to production (CloudKit's "Deploy Schema Changes").
    ///
    /// `basedOn`: ``fingerprint(production:development:)`` of the diff the person saw (the
    /// console's deploy form, decisions C61); when either side changed since, nothing is deployed
    /// (`CONFLICT`), so the box ticked for the data-losing changes shown cannot apply to others.
    /// Nil: no check (the CLI and the admin endpoint).
    /// - Throws: `BAD_REQUEST` listing data-losing changes unless `force`; `CONFLICT` as above.
    public func promote(container: String, force: Bool = false, basedOn: String? = nil) throws -> Outcome {
        try requireContainer(container)
        let development = try store.read { try SchemaRegistry.shared.schema($0, container: container, environment: .development) } ?? Schema()
        return try install(container: container, environment: .production, force: force) { production in
            if let basedOn, Self.fingerprint(production: production, development: development) != basedOn,
               Self.fingerprint(production) != Self.fingerprint(development) {
                throw CloudKitError(.conflict, "development's or production's schema changed after the comparison was shown; nothing was deployed")
            }
            return development
        }
    }

    /// Makes `make(stored)` the environment's schema, in one write transaction with the stored
    /// schema it was made from.
    private func install(container: String, environment: Environment, force: Bool,
                         _ make: @escaping @Sendable (Schema) throws -> Schema) throws -> Outcome {
        try requireContainer(container)
        let now = Clock.milliseconds()
        let (changes, rebuild) = try store.write { tx in
            let old = try SchemaRegistry.shared.schema(tx, container: container, environment: environment) ?? Schema()
            let schema = try make(old)
            try SchemaLimits.check(schema)
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
        var unsearchable: [String: [String]] = [:]
        for type in rebuild.sorted() {
            var after: Int64 = 0
            var count = 0
            let batch = rebuildBatch
            while let done = try store.write({ [after] tx in
                try tx.rebuildIndexes(container: container, environment: environment, recordType: type, after: after, limit: batch)
            }) {
                count += done.count
                after = done.last
                if !done.unsearchable.isEmpty { unsearchable[type, default: []] += done.unsearchable }
            }
            reindexed[type] = count
        }
        return Outcome(changes: changes, reindexed: reindexed, unsearchable: unsearchable)
    }

    private func requireContainer(_ id: String) throws {
        guard try store.read({ try $0.containerExists(id) }) else {
            throw CloudKitError(.notFound, "no container '\(id)' (create it with: tandem container create \(id))")
        }
    }
}
