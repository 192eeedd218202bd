/// One difference between two schemas, as `Schema.changes(to:)` reports it.
///
/// `losesData` marks the changes CloudKit refuses when publishing to production because
/// records could lose data (spec §5.2, "Publishing"): removing a record type, removing a
/// field, changing a field's type; and (Tandem) removing or reordering roles, which moves
/// users' role assignments. Dropping a system field from the file only drops its
/// options (the field stays), so it is an options change.
public enum SchemaChange: Sendable, Hashable, CustomStringConvertible {
    case roleAdded(String)
    case roleRemoved(String)
    /// Roles keep their positions only when the new list extends the old one: users' `roles`
    /// name them by position (decision SC4), so any other change moves who holds what.
    case rolePositionsChanged(from: [String], to: [String])
    case recordTypeAdded(RecordType)
    case recordTypeRemoved(RecordType)
    case fieldAdded(recordType: String, Field)
    case fieldRemoved(recordType: String, Field)
    case fieldTypeChanged(recordType: String, field: String, from: DataType, to: DataType)
    case fieldOptionsChanged(recordType: String, field: String, from: FieldOptions, to: FieldOptions)
    /// The rights a role holds on a record type, all its grants merged.
    case rightsChanged(recordType: String, role: String, from: Rights, to: Rights)

    /// True when applying the change could lose production data.
    public var losesData: Bool {
        switch self {
        case .recordTypeRemoved, .fieldRemoved, .fieldTypeChanged, .roleRemoved, .rolePositionsChanged: true
        default: false
        }
    }

    /// One line naming the change: `removed field Note.title (STRING)`. It names what the schema
    /// does, not what happens to records: an import or promotion never deletes stored records or
    /// values (decision F2); `losesData` marks what a client could no longer write or read.
    public var description: String {
        switch self {
        case .roleAdded(let role): "added role \(role)"
        case .roleRemoved(let role): "removed role \(role) (users holding it lose it)"
        case .rolePositionsChanged(let from, let to):
            "role positions change from \(from.joined(separator: ", ")) to \(to.joined(separator: ", ")) (users' roles are stored by position)"
        case .recordTypeAdded(let type): "added record type \(type.name) (\(Self.count(type.fields.count, "field")), \(Self.count(type.grants.count, "grant")))"
        case .recordTypeRemoved(let type): "removed record type \(type.name)"
        case .fieldAdded(let type, let field): "added field \(type).\(field.name) \(Self.spelled(field.type, field.options))"
        case .fieldRemoved(let type, let field): "removed field \(type).\(field.name) (\(field.type))"
        case .fieldTypeChanged(let type, let field, let from, let to): "changed type of field \(type).\(field) from \(from) to \(to)"
        case .fieldOptionsChanged(let type, let field, let from, let to):
            "changed options of field \(type).\(field) from \(Self.spelled(from)) to \(Self.spelled(to))"
        case .rightsChanged(let type, let role, let from, let to):
            "changed rights of role \(role) on \(type) from \(Self.spelled(from)) to \(Self.spelled(to))"
        }
    }

    private static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
    private static func spelled(_ type: DataType, _ options: FieldOptions) -> String {
        ([type.description] + options.names).joined(separator: " ")
    }
    private static func spelled(_ options: FieldOptions) -> String {
        options.isEmpty ? "none" : options.names.joined(separator: " ")
    }
    private static func spelled(_ rights: Rights) -> String {
        rights.isEmpty ? "none" : rights.names.joined(separator: ", ")
    }
}

extension Array where Element == SchemaChange {
    /// The changes one per line, data-losing ones marked `!` at the start and
    /// `(can lose production data)` at the end, then a count; `no changes` when empty.
    /// This is what `tandem schema diff` prints.
    public var report: String {
        guard !isEmpty else { return "no changes\n" }
        let lines = map { $0.losesData ? "! \($0)  (can lose production data)" : "  \($0)" }
        let losing = filter(\.losesData).count
        return (lines + ["\(count) change\(count == 1 ? "" : "s"), \(losing) can lose production data"]).joined(separator: "\n") + "\n"
    }
}
