internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Asset uploads' metadata; their bytes are files (decisions P20) (SQLite: `SQLiteStore+Assets.swift`).
extension PostgresStoreTransaction {
    func assetUpload(token: String) throws -> AssetUpload? {
        try db.queryOne("""
            SELECT token, container_id, environment, owner, record_type, field_name, record_name, expires_at, checksum, size
            FROM asset_uploads WHERE token = $1
            """, [.text(token)]) { row in
            AssetUpload(token: try row.string(0), container: try row.string(1),
                        environment: Environment(rawValue: try row.string(2)) ?? .development,
                        owner: try row.string(3), recordType: try row.string(4), fieldName: try row.string(5),
                        recordName: try row.optionalString(6), expiresAt: try row.int64(7), checksum: try row.optionalString(8),
                        size: try row.optionalInt64(9))
        }
    }

    func addAssetUpload(_ upload: AssetUpload) throws {
        try db.run("DELETE FROM asset_uploads WHERE expires_at < $1 AND checksum IS NULL", [.integer(Clock.milliseconds())])
        try db.run("""
            INSERT INTO asset_uploads (token, container_id, environment, owner, record_type, field_name, record_name, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """, [.text(upload.token), .text(upload.container), .text(upload.environment.rawValue), .text(upload.owner),
                  .text(upload.recordType), .text(upload.fieldName), .optional(upload.recordName), .integer(upload.expiresAt)])
    }

    func completeAssetUpload(token: String, checksum: String, size: Int64) throws -> Bool {
        try db.run("UPDATE asset_uploads SET checksum = $1, size = $2 WHERE token = $3 AND checksum IS NULL",
                   [.text(checksum), .integer(size), .text(token)]) == 1
    }
}
