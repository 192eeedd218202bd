import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func app(_ appID: String, container: String) throws -> StoredApp? {
        try db.queryOne("SELECT app_id, container_id, domains, created_at FROM apps WHERE container_id = ? AND app_id = ?",
                        [.text(container), .text(appID)]) { row in
            StoredApp(appID: row.text(0), container: row.text(1),
                      domains: row.text(2).split(separator: "\n").map(String.init), createdAt: row.int64(3))
        }
    }

    func apps(container: String) throws -> [StoredApp] {
        try db.query("SELECT app_id, container_id, domains, created_at FROM apps WHERE container_id = ? ORDER BY app_id",
                     [.text(container)]) { row in
            StoredApp(appID: row.text(0), container: row.text(1),
                      domains: row.text(2).split(separator: "\n").map(String.init), createdAt: row.int64(3))
        }
    }

    func associationFileStamp(domain: String, container: String) throws -> (version: Int64, expiresAt: Int64?)? {
        try db.queryOne("SELECT version, expires_at FROM association_files WHERE container_id = ? AND domain = ?",
                        [.text(container), .text(domain)]) { row in
            (row.int64(0), row.isNull(1) ? nil : row.int64(1))
        }
    }

    func associationFile(domain: String, container: String) throws -> StoredAssociationFile? {
        try db.queryOne("""
            SELECT container_id, domain, body, source, stored_at, expires_at, version FROM association_files
            WHERE container_id = ? AND domain = ?
            """, [.text(container), .text(domain)]) { row in
            StoredAssociationFile(container: row.text(0), domain: row.text(1), body: row.blob(2),
                                  source: StoredAssociationFile.Source(rawValue: row.text(3)) ?? .upload, storedAt: row.int64(4),
                                  expiresAt: row.isNull(5) ? nil : row.int64(5), version: row.int64(6))
        }
    }

    func putApp(_ app: StoredApp) throws {
        try db.run("""
            INSERT INTO apps (container_id, app_id, domains, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (container_id, app_id) DO UPDATE SET domains = excluded.domains
            """, [.text(app.container), .text(app.appID), .text(app.domains.joined(separator: "\n")), .integer(app.createdAt)])
    }

    func putAssociationFile(_ file: StoredAssociationFile) throws -> StoredAssociationFile {
        try db.run("""
            INSERT INTO association_files (container_id, domain, body, source, stored_at, expires_at, version)
            VALUES (?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (container_id, domain) DO UPDATE SET body = excluded.body, source = excluded.source,
                stored_at = excluded.stored_at, expires_at = excluded.expires_at, version = association_files.version + 1
            """, [.text(file.container), .text(file.domain), .blob(file.body), .text(file.source.rawValue), .integer(file.storedAt),
                  file.expiresAt.map(SQLiteValue.integer) ?? .null])
        var stored = file
        stored.version = try associationFileStamp(domain: file.domain, container: file.container)?.version ?? 1
        return stored
    }
}
