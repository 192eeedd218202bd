import TandemCore
import TandemSchema
public import TandemStore

extension Admin {
    /// Creates an admin token, for the schema endpoint (`SchemaRoutes`); returns the token,
    /// which is shown once (only its SHA-256 is stored). An admin token manages every container
    /// of the data directory and acts as no user (decision SC3). With `expiresAfterSeconds`, it
    /// stops working that long after now (A14); `tandem token revoke --admin ID` ends it sooner.
    public static func createAdminToken(expiresAfterSeconds: Int64? = nil, store: any Store) throws -> String {
        let token = Tokens.random(prefix: "tda_")
        let now = Clock.milliseconds()
        let expiresAt = expiresAfterSeconds.map { now + $0 * 1000 }
        try store.write { try $0.addAdminToken(hash: Tokens.hash(token), expiresAt: expiresAt, at: now) }
        return token
    }

    /// Sets a user's custom roles in a container environment: their `Users` record in the
    /// public database gets `roles` = the roles' positions (from 1) in the schema's
    /// `CREATE ROLE` order, the `LIST<INT64>` CloudKit exports (decision SC4). The record is
    /// the server's (`UserRecords`, SC12): one a client created at that name before clients
    /// were refused is taken back (the user becomes its creator). Returns the roles now in
    /// effect, read back the way requests read them.
    /// - Parameter replacing: delete a record of another type found at the user's name (made
    ///   by a client before SC12) and store a `Users` record instead.
    /// - Throws: `NOT_FOUND` for an unknown user or container, `BAD_REQUEST` for a role the
    ///   environment's schema does not create, `CONFLICT` when a record of another type holds
    ///   the user's name (and `replacing` is false), `INTERNAL_ERROR` when the roles read back
    ///   differ from the ones assigned: the command never reports roles that do not apply.
    @discardableResult
    public static func assignRoles(_ roles: [String], to key: String, container: String, environment: Environment,
                                   replacing: Bool = false, store: any Store) throws -> [String] {
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else {
            throw CloudKitError(.notFound, "no user '\(key)'")
        }
        guard try store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let schema = try store.read { try SchemaRegistry.shared.schema($0, container: container, environment: environment) } ?? Schema()
        var positions: [FieldValue] = []
        var wanted: [String] = []
        for role in roles {
            guard let index = schema.roles.firstIndex(of: role) else {
                let known = schema.roles.isEmpty ? "none" : schema.roles.joined(separator: ", ")
                throw CloudKitError.badRequest("the \(environment.rawValue) schema of \(container) creates no role '\(role)' (its roles: \(known))")
            }
            if wanted.contains(role) { continue }
            wanted.append(role)
            positions.append(.int64(Int64(index + 1)))
        }
        let scope = DatabaseScope(container: container, environment: environment, database: .public, owner: DatabaseScope.publicOwner)
        let now = Clock.milliseconds()
        try store.write { [positions] tx in
            let zone = try tx.ensureZone(scope, name: ZoneID.defaultZoneName, at: now)
            let own = Record.Stamp(timestamp: now, userRecordName: user.recordName)
            var record = Record(recordName: user.recordName, recordType: UserRecords.recordType, fields: [:], zoneID: zone.zoneID, created: own)
            if let existing = try tx.record(zone: zone, name: user.recordName) {
                if existing.recordType == UserRecords.recordType {
                    record = existing
                } else if replacing {
                    try tx.deleteRecord(name: existing.recordName, recordType: existing.recordType, zone: zone, sequence: tx.nextChangeSequence(zone))
                } else {
                    let creator = existing.created?.userRecordName ?? "unknown"
                    throw CloudKitError(.conflict, "the \(environment.rawValue) public database of \(container) holds a '\(existing.recordType)' record (created by \(creator)) at \(user.recordName), the name of this user's Users record, so no roles can apply; run again with --replace to delete it and store a Users record")
                }
            }
            // A Users record a client made before they were refused is the server's now.
            if record.created?.userRecordName != user.recordName { record.created = own }
            let sequence = try tx.nextChangeSequence(zone)
            record.fields[UserRecords.rolesField] = .list(positions, of: .int64)
            record.recordChangeTag = ChangeTags.tag(zone: zone.key, sequence: sequence)
            record.modified = own
            try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
        }
        let applied = try self.roles(of: user.recordName, container: container, environment: environment, store: store)
        guard applied == wanted else {
            throw CloudKitError(.internalError, "the roles of \(key) read back as [\(applied.joined(separator: ", "))], not the [\(wanted.joined(separator: ", "))] assigned")
        }
        return applied
    }

    /// A user's custom roles in a container environment, exactly as requests are authorized
    /// with them (`UserRecords.assignedRoles`); empty when they hold none.
    public static func roles(of key: String, container: String, environment: Environment, store: any Store) throws -> [String] {
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else {
            throw CloudKitError(.notFound, "no user '\(key)'")
        }
        let scope = DatabaseScope(container: container, environment: environment, database: .public, owner: DatabaseScope.publicOwner)
        return try store.read { reader in
            let schema = try SchemaRegistry.shared.schema(reader, container: container, environment: environment) ?? Schema()
            return UserRecords.assignedRoles(try UserRecords.record(of: user.recordName, reader, scope), schema: schema)
        }
    }
}
