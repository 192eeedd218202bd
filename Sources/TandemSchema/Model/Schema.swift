/// A CloudKit schema: custom roles and record types, as a `.ckdb` file declares them.
///
/// Shape (CloudKit schema language, spec §5.2):
/// `DEFINE SCHEMA { CREATE ROLE name; | RECORD TYPE name ( item, ... ); }`.
/// Order is the order of declaration; the printer keeps it, so a parsed and printed schema
/// parses back equal. Comments are not kept (CloudKit does not keep them either).
///
/// ```swift
/// let schema = try Schema(parsing: text, file: "schema.ckdb")
/// schema.recordType(named: "Note")?.field(named: "title")?.options   // [.queryable, .sortable]
/// ```
public struct Schema: Sendable, Hashable {
    /// Roles created with `CREATE ROLE`; built-in roles (`_world`, `_icloud`, `_creator`) are implicit.
    public var roles: [String]
    public var recordTypes: [RecordType]

    public init(roles: [String] = [], recordTypes: [RecordType] = []) {
        self.roles = roles
        self.recordTypes = recordTypes
    }

    /// The record type with this exact (case-sensitive) name.
    public func recordType(named name: String) -> RecordType? {
        recordTypes.first { $0.name == name }
    }

    /// True for a built-in role or one this schema creates.
    public func hasRole(_ name: String) -> Bool {
        Role.builtIn.contains(name) || roles.contains(name)
    }
}

/// Role names (CloudKit schema language, spec §5.2: built-in roles and `CREATE ROLE`).
public enum Role {
    /// Everyone, including anonymous readers of the public database.
    public static let world = "_world"
    /// Any signed-in user.
    public static let icloud = "_icloud"
    /// The record's creator.
    public static let creator = "_creator"
    /// The roles every schema has without declaring them.
    public static let builtIn: Set<String> = [world, icloud, creator]
}
