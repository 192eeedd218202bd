import TandemCore
import TandemSchema
import TandemStore

/// User records in the public database: one `Users` record per account, named by the
/// account's user record name, holding the custom roles an administrator assigned (decisions
/// SC4, SC12). They belong to the server: a client cannot create, replace or delete one, nor
/// any record at a name shaped like a user record name, whatever record type it names; the
/// user may update the other fields of their own record; no client may touch `roles`.
///
/// The rule is by name as well as by type because a record at a user's name is where the
/// server looks for their roles: whoever could put one there first would be its creator.
enum UserRecords {
    /// The record type holding each user's role assignments, and its field.
    static let recordType = "Users"
    static let rolesField = "roles"

    /// True for a name shaped like an account's user record name: `_` and 32 hexadecimal
    /// digits (`UserRecordNames.make`), whether or not the account exists yet.
    static func isUserRecordName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == 33, utf8.first == UInt8(ascii: "_") else { return false }
        return utf8.dropFirst().allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    /// True when a record called `name` of type `type` is (or would be) a user record.
    static func isUserRecord(name: String, type: String?) -> Bool {
        type == recordType || isUserRecordName(name)
    }

    /// Refuses what a client may not do to a user record of the public database; does nothing
    /// for other records. Runs before the schema's grants, which cannot widen it.
    /// - Throws: `ACCESS_DENIED` with the reason.
    static func authorize(_ op: RecordOperation, existing: Record?, user: String) throws {
        let named = isUserRecord(name: op.recordName, type: op.recordType)
        guard named || existing.map({ isUserRecord(name: $0.recordName, type: $0.recordType) }) == true else { return }
        if op.fields[rolesField] != nil {
            throw CloudKitError(.accessDenied, "field '\(rolesField)' of \(recordType) records is assigned by an administrator (tandem user roles)")
        }
        guard let existing else {
            throw CloudKitError(.accessDenied, "'\(op.recordName)' is a user record name: user records of the public database are made by the server, not by clients")
        }
        switch op.kind {
        case .delete, .forceDelete:
            throw CloudKitError(.accessDenied, "user record '\(op.recordName)' belongs to the server and cannot be deleted")
        case .replace, .forceReplace:
            throw CloudKitError(.accessDenied, "user record '\(op.recordName)' belongs to the server and cannot be replaced; update its fields instead")
        case .create, .update, .forceUpdate:
            break
        }
        guard existing.recordType == recordType, existing.recordName == user, !user.isEmpty else {
            throw CloudKitError(.accessDenied, "only its user may change user record '\(op.recordName)'")
        }
    }

    /// Refuses deleting `record` when it is a user record (a `DELETE_SELF` cascade is a delete too).
    static func refuseCascade(into record: Record) throws {
        guard isUserRecord(name: record.recordName, type: record.recordType) else { return }
        throw CloudKitError(.accessDenied, "the delete would cascade (DELETE_SELF) into user record '\(record.recordName)', which belongs to the server; remove that reference first")
    }

    /// The custom roles `record` assigns under `schema`, in the record's order: the `roles`
    /// field of a `Users` record, as 1-based positions in `CREATE ROLE` order (or role names).
    /// A record of any other type assigns none. The one reading of roles: enforcement
    /// (`PublicGrants`) and the admin command both use it, so what the command shows applies.
    static func assignedRoles(_ record: Record?, schema: Schema) -> [String] {
        guard let record, record.recordType == recordType, let value = record.fields[rolesField] else { return [] }
        var roles: [String] = []
        for element in value.elements {
            let role: String?
            switch element {
            case .int64(let position) where position >= 1 && position <= schema.roles.count:
                role = schema.roles[Int(position) - 1]
            case .string(let name) where schema.roles.contains(name):
                role = name
            default:
                role = nil
            }
            if let role, !roles.contains(role) { roles.append(role) }
        }
        return roles
    }

    /// The user's record in the public database's default zone of `scope`, if any.
    static func record(of user: String, _ reader: any StoreReading, _ scope: DatabaseScope) throws -> Record? {
        guard let zone = try reader.zone(scope, name: ZoneID.defaultZoneName) else { return nil }
        return try reader.record(zone: zone, name: user)
    }
}
