internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Apps and association files (SQLite: `SQLiteStore+Links.swift`).
extension PostgresStoreTransaction {
    static func storedApp(_ row: PostgresRow) throws -> StoredApp {
        StoredApp(appID: try row.string(0), container: try row.string(1),
                  domains: try row.string(2).split(separator: "\n").map(String.init), createdAt: try row.int64(3))
    }

    func app(_ appID: String, container: String) throws -> StoredApp? {
        try db.queryOne("SELECT app_id, container_id, domains, created_at FROM apps WHERE container_id = $1 AND app_id = $2",
                        [.text(container), .text(appID)], Self.storedApp)
    }

    func apps(container: String) throws -> [StoredApp] {
        try db.query("SELECT app_id, container_id, domains, created_at FROM apps WHERE container_id = $1 ORDER BY app_id",
                     [.text(container)], Self.storedApp)
    }

    func associationFileStamp(domain: String, container: String) throws -> (version: Int64, expiresAt: Int64?)? {
        try db.queryOne("SELECT version, expires_at FROM association_files WHERE container_id = $1 AND domain = $2",
                        [.text(container), .text(domain)]) { row in (try row.int64(0), try row.optionalInt64(1)) }
    }

    func associationFile(domain: String, container: String) throws -> StoredAssociationFile? {
        try db.queryOne("""
            SELECT container_id, domain, body, source, stored_at, expires_at, version FROM association_files
            WHERE container_id = $1 AND domain = $2
            """, [.text(container), .text(domain)]) { row in
            StoredAssociationFile(container: try row.string(0), domain: try row.string(1), body: try row.bytes(2),
                                  source: StoredAssociationFile.Source(rawValue: try row.string(3)) ?? .upload,
                                  storedAt: try row.int64(4), expiresAt: try row.optionalInt64(5), version: try row.int64(6))
        }
    }

    func putApp(_ app: StoredApp) throws {
        try db.run("""
            INSERT INTO apps (container_id, app_id, domains, created_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (container_id, app_id) DO UPDATE SET domains = EXCLUDED.domains
            """, [.text(app.container), .text(app.appID), .text(app.domains.joined(separator: "\n")), .integer(app.createdAt)])
    }

    func putAssociationFile(_ file: StoredAssociationFile) throws -> StoredAssociationFile {
        let version = try db.queryOne("""
            INSERT INTO association_files (container_id, domain, body, source, stored_at, expires_at, version)
            VALUES ($1, $2, $3, $4, $5, $6, 1)
            ON CONFLICT (container_id, domain) DO UPDATE SET body = EXCLUDED.body, source = EXCLUDED.source,
                stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at, version = association_files.version + 1
            RETURNING version
            """, [.text(file.container), .text(file.domain), .bytes(file.body), .text(file.source.rawValue), .integer(file.storedAt),
                  .optional(file.expiresAt)]) { try $0.int64(0) }
        var stored = file
        stored.version = version ?? 1
        return stored
    }
}
