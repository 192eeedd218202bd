import TandemCore
import TandemSchema
public import TandemStore

extension Admin {
    /// Creates an admin token, for the schema endpoint (`SchemaRoutes`); returns the token,
    /// which is shown once (only its SHA-256 is stored). An admin token manages every container
    /// of the data directory and acts as no user (decision SC3).
    public static func createAdminToken(store: any Store) throws -> String {
        let token = Tokens.random(prefix: "tda_")
        let now = Clock.milliseconds()
        try store.write { try $0.addAdminToken(hash: Tokens.hash(token), at: now) }
        return token
    }

    /// Sets a user's custom roles in a container environment: their `Users` record in the
    /// public database gets `roles` = the roles' positions (from 1) in the schema's
    /// `CREATE ROLE` order, the `LIST<INT64>` CloudKit exports (decision SC4).
    /// - Throws: `NOT_FOUND` for an unknown user or container, `BAD_REQUEST` for a role the
    ///   environment's schema does not create.
    public static func assignRoles(_ roles: [String], to key: String, container: String, environment: Environment,
                                   store: any Store) throws {
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else {
            throw CloudKitError(.notFound, "no user '\(key)'")
        }
        guard try store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let schema = try store.read { try SchemaRegistry.shared.schema($0, container: container, environment: environment) } ?? Schema()
        var positions: [FieldValue] = []
        for role in roles {
            guard let index = schema.roles.firstIndex(of: role) else {
                let known = schema.roles.isEmpty ? "none" : schema.roles.joined(separator: ", ")
                throw CloudKitError.badRequest("the \(environment.rawValue) schema of \(container) creates no role '\(role)' (its roles: \(known))")
            }
            positions.append(.int64(Int64(index + 1)))
        }
        let scope = DatabaseScope(container: container, environment: environment, database: .public, owner: DatabaseScope.publicOwner)
        let now = Clock.milliseconds()
        try store.write { [positions] tx in
            let zone = try tx.ensureZone(scope, name: ZoneID.defaultZoneName, at: now)
            var record = try tx.record(zone: zone, name: user.recordName)
                ?? Record(recordName: user.recordName, recordType: PublicGrants.usersType, fields: [:], zoneID: zone.zoneID,
                          created: Record.Stamp(timestamp: now, userRecordName: user.recordName))
            let sequence = try tx.nextChangeSequence(zone)
            record.fields[PublicGrants.rolesField] = .list(positions, of: .int64)
            record.recordChangeTag = ChangeTags.tag(zone: zone.key, sequence: sequence)
            record.modified = Record.Stamp(timestamp: now, userRecordName: user.recordName)
            try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
        }
    }

    /// A user's custom roles in a container environment (their `Users` record's `roles`, by
    /// the schema's `CREATE ROLE` order); empty when they hold none.
    public static func roles(of key: String, container: String, environment: Environment, store: any Store) throws -> [String] {
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else {
            throw CloudKitError(.notFound, "no user '\(key)'")
        }
        let scope = DatabaseScope(container: container, environment: environment, database: .public, owner: DatabaseScope.publicOwner)
        return try store.read { reader in
            let schema = try SchemaRegistry.shared.schema(reader, container: container, environment: environment) ?? Schema()
            guard let zone = try reader.zone(scope, name: ZoneID.defaultZoneName),
                  let record = try reader.record(zone: zone, name: user.recordName),
                  let value = record.fields[PublicGrants.rolesField] else { return [] }
            return value.elements.compactMap { element -> String? in
                guard case .int64(let position) = element, position >= 1, position <= schema.roles.count else { return nil }
                return schema.roles[Int(position) - 1]
            }
        }
    }
}
