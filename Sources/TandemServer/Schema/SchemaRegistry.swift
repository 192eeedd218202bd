import TandemCore
import TandemSchema
import TandemStore

/// Parsed schemas, cached by the stored schema's etag.
///
/// Every write of a record checks its environment's schema, so parsing the stored `.ckdb` text
/// each time would dominate the write. The etag is 128 random bits minted per schema write, so
/// one cache can serve every store in the process (tests run several) without ever handing out
/// another store's schema; that is why it is one shared instance rather than a per-server one.
final class SchemaRegistry: Sendable {
    static let shared = SchemaRegistry()
    private static let capacity = 256
    private let parsed = Locked<[String: Schema]>([:])

    /// The environment's schema, or nil when none was imported or inferred yet. `known` is
    /// its etag when the caller read it in this transaction (`.some(nil)`: no schema).
    func schema(_ reader: any StoreReading, container: String, environment: Environment, etag known: String?? = .none) throws -> Schema? {
        let read: String?
        if case .some(let known) = known { read = known } else { read = try reader.schemaETag(container: container, environment: environment) }
        guard let etag = read else { return nil }
        if let hit = parsed.withLock({ $0[etag] }) { return hit }
        guard let stored = try reader.schema(container: container, environment: environment) else { return nil }
        // The text was printed by Tandem from a valid model, so it parses; if it does not, the
        // request fails with an internal error naming the file.
        let schema = try Schema(parsing: stored.text, file: "\(container)/\(environment.rawValue).ckdb")
        parsed.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[etag] = schema
        }
        return schema
    }

    /// Stores `schema` as the environment's schema with what it indexes; returns the record
    /// types whose existing records need their index entries rebuilt.
    static func put(_ schema: Schema, _ tx: any StoreWriting, container: String, environment: Environment,
                    createSortIndexes: Bool = true, at time: Int64) throws -> Set<String> {
        try tx.putSchema(schema.ckdb, etag: UUIDs.make(), fields: schema.indexedFields, container: container,
                         environment: environment, createSortIndexes: createSortIndexes, at: time)
    }
}

extension Schema {
    /// What the store indexes: every declared non-system field with its options (a field
    /// without options gets no index). System fields are columns of `records`, always indexed.
    var indexedFields: [IndexedField] {
        recordTypes.flatMap { type in
            type.fields.filter { !$0.isSystem }.map { field in
                IndexedField(recordType: type.name, field: field.name, options: field.indexOptions,
                             ordered: field.options.contains(.sortable) && field.type.ordersAsStored)
            }
        }
    }

    /// How `recordType`'s fields are indexed, by name: what a store reads back from the
    /// `indexedFields` it was given (`putRecord`'s `indexing`, decisions E27).
    func indexing(of recordType: String) -> [String: IndexOptions] {
        guard let type = recordTypes.first(where: { $0.name == recordType }) else { return [:] }
        var result: [String: IndexOptions] = [:]
        for field in type.fields where !field.isSystem && result[field.name] == nil { result[field.name] = field.indexOptions }
        return result
    }
}

extension Field {
    /// The options a store indexes the field by.
    var indexOptions: IndexOptions {
        var options: IndexOptions = []
        if self.options.contains(.queryable) { options.insert(.queryable) }
        if self.options.contains(.sortable) { options.insert(.sortable) }
        if self.options.contains(.searchable) { options.insert(.searchable) }
        return options
    }
}

extension DataType {
    /// A single value whose stored JSON orders as CloudKit sorts it (text, numbers, times).
    var ordersAsStored: Bool {
        switch self {
        case .primitive(.string), .primitive(.int64), .primitive(.double), .primitive(.timestamp), .primitive(.number): true
        default: false
        }
    }
}
