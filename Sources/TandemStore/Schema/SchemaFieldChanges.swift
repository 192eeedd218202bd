/// What `putSchema` decides from a container environment's indexed fields before and after a
/// schema change, the same for both stores (decisions P44): which fields keep or get a sort
/// index, and which record types need their index rows rebuilt.
package struct SchemaFieldChanges {
    /// The fields stored before, each with the sort index name it had (nil: none).
    private let before: [(field: IndexedField, sortIndex: String?)]
    /// The fields the new schema indexes.
    private let after: [IndexedField]

    package init(before: [(field: IndexedField, sortIndex: String?)], after: [IndexedField]) {
        self.before = before
        self.after = after
    }

    /// The sort index `field` gets: `ordered` fields get `name`, but only when the caller may
    /// create sort indexes (`createSortIndexes`) or the field already had one, so a later
    /// schema does not add an index an operator chose not to build.
    package func sortIndex(for field: IndexedField, createSortIndexes: Bool, name: (IndexedField) -> String?) -> String? {
        guard field.ordered else { return nil }
        guard createSortIndexes || hadSortIndex.contains(Self.key(field)) else { return nil }
        return name(field)
    }

    /// Record types whose `field_index` rows or search entries no longer match: every type
    /// with a field whose options changed, was added or was removed. (When the environment
    /// had no schema, every type with records also needs it: the store adds those.)
    package var changedRecordTypes: Set<String> {
        var changed = Set<String>()
        let old = Dictionary(before.map { (Self.key($0.field), $0.field.options) }, uniquingKeysWith: { a, _ in a })
        let new = Dictionary(after.map { (Self.key($0), $0.options) }, uniquingKeysWith: { a, _ in a })
        for (key, options) in old where new[key] != options { changed.insert(String(key.prefix { $0 != "\u{0}" })) }
        for (key, options) in new where old[key] != options { changed.insert(String(key.prefix { $0 != "\u{0}" })) }
        return changed
    }

    private var hadSortIndex: Set<String> { Set(before.filter { $0.sortIndex != nil }.map { Self.key($0.field) }) }

    private static func key(_ field: IndexedField) -> String { field.recordType + "\u{0}" + field.field }
}
