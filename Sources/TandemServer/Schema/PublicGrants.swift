import TandemCore
import TandemSchema
import TandemStore

/// The schema's grants, applied to the public database (spec §5.2): `_world` is everyone,
/// anonymous readers included; `_icloud` any signed-in user; `_creator` the record's creator;
/// custom roles are the ones listed in the caller's `Users` record (`roles`, decision SC4;
/// `UserRecords`, which also keeps user records out of clients' hands).
/// Reading needs `READ`, saving a new record `CREATE`, changing or deleting one `WRITE`.
/// A record type the development schema does not have yet gets the grants it will be created
/// with (`Schema.justInTimeGrants`).
enum PublicGrants {
    /// Refuses `op` unless the caller's roles grant what it needs (and, for a user record,
    /// unless `UserRecords` allows it at all).
    /// - Throws: `ACCESS_DENIED` naming the right, the record type and the caller's roles.
    static func authorize(_ op: RecordOperation, existing: Record?, tx: any StoreReading, scope: RequestScope) throws {
        try UserRecords.authorize(op, existing: existing, user: scope.user)
        guard let typeName = op.recordType ?? existing?.recordType, typeName != Share.recordType else { return }
        let schema = try SchemaRegistry.shared.schema(tx, container: scope.database.container, environment: scope.database.environment)
        // In production an unknown type is refused by the schema check, with a better reason.
        guard let type = recordType(typeName, schema, scope.database.environment) else { return }
        let needed: Rights = (existing == nil || op.kind == .create) ? .create : .write
        let isCreator = existing?.created?.userRecordName == scope.user && !scope.user.isEmpty
        let rights = try rights(on: type, schema: schema, isCreator: isCreator, tx, scope)
        guard rights.contains(needed) else {
            throw denied(needed, typeName, scope)
        }
    }

    /// `query` as the caller may run it: unchanged when a role grants READ, limited to the
    /// caller's own records when only `_creator` does.
    /// - Throws: `ACCESS_DENIED` when no role grants READ.
    static func readable(_ query: Query, _ reader: any StoreReading, scope: RequestScope) throws -> Query {
        switch try readAccess(query.recordType, reader, scope: scope) {
        case .all:
            return query
        case .ownRecords:
            var limited = query
            limited.filters.append(Filter(comparator: .equals, field: .system(.createdUserRecordName), value: .string(scope.user)))
            return limited
        case .none:
            throw denied(.read, query.recordType, scope)
        }
    }

    /// Which records of a type the caller may read in the public database.
    enum ReadAccess: Sendable {
        /// Every record: a role the caller holds grants READ (or the type is not governed by
        /// grants: shares, or a type production's schema lacks, which the schema check refuses).
        case all
        /// Only records the caller created: `_creator` is the only role granting READ.
        case ownRecords
        /// None.
        case none
    }

    /// What the caller's roles let them read of `typeName` (records/query and the public
    /// database's query subscriptions, decision J12, decide by this).
    static func readAccess(_ typeName: String, _ reader: any StoreReading, scope: RequestScope) throws -> ReadAccess {
        guard typeName != Share.recordType else { return .all }
        let schema = try SchemaRegistry.shared.schema(reader, container: scope.database.container, environment: scope.database.environment)
        guard let type = recordType(typeName, schema, scope.database.environment) else { return .all }
        if try rights(on: type, schema: schema, isCreator: false, reader, scope).contains(.read) { return .all }
        guard !scope.user.isEmpty, type.rightsByRole[Role.creator]?.contains(.read) == true else { return .none }
        return .ownRecords
    }

    /// Lookup results with the records the caller may not read turned into `ACCESS_DENIED` items.
    static func readable(_ results: [RecordService.ItemResult], _ reader: any StoreReading, scope: RequestScope) throws -> [RecordService.ItemResult] {
        let schema = try SchemaRegistry.shared.schema(reader, container: scope.database.container, environment: scope.database.environment)
        var roles: Set<String>?
        return try results.map { result in
            guard case .saved(let record) = result, record.recordType != Share.recordType else { return result }
            guard let type = recordType(record.recordType, schema, scope.database.environment) else { return result }
            if roles == nil { roles = try self.roles(schema: schema, reader, scope) }
            var held = roles!
            if record.created?.userRecordName == scope.user && !scope.user.isEmpty { held.insert(Role.creator) }
            guard rights(on: type, roles: held).contains(.read) else {
                var error = denied(.read, record.recordType, scope)
                error.recordName = record.recordName
                return .failed(error)
            }
            return result
        }
    }

    // MARK: Roles and rights

    private static func recordType(_ name: String, _ schema: Schema?, _ environment: Environment) -> RecordType? {
        if let type = schema?.recordType(named: name) { return type }
        return environment == .development ? RecordType(name: name, grants: Schema.justInTimeGrants) : nil
    }

    private static func rights(on type: RecordType, schema: Schema?, isCreator: Bool, _ reader: any StoreReading,
                               _ scope: RequestScope) throws -> Rights {
        var roles = try roles(schema: schema, reader, scope)
        if isCreator { roles.insert(Role.creator) }
        return rights(on: type, roles: roles)
    }

    static func rights(on type: RecordType, roles: Set<String>) -> Rights {
        type.rightsByRole.reduce(into: Rights()) { rights, grant in
            if roles.contains(grant.key) { rights.formUnion(grant.value) }
        }
    }

    /// The caller's roles apart from `_creator`: `_world`; `_icloud` when signed in; the custom
    /// roles of their `Users` record.
    static func roles(schema: Schema?, _ reader: any StoreReading, _ scope: RequestScope) throws -> Set<String> {
        guard !scope.user.isEmpty else { return [Role.world] }
        var roles: Set<String> = [Role.world, Role.icloud]
        guard let schema, !schema.roles.isEmpty else { return roles }
        roles.formUnion(UserRecords.assignedRoles(try UserRecords.record(of: scope.user, reader, scope.database), schema: schema))
        return roles
    }

    private static func denied(_ right: Rights, _ type: String, _ scope: RequestScope) -> CloudKitError {
        let who = scope.user.isEmpty ? "an anonymous caller" : "you"
        return CloudKitError(.accessDenied, "\(who) may not \(right.names.joined().lowercased()) records of type '\(type)' in the public database (no grant of \(right.names.joined()) to your roles)")
    }
}
