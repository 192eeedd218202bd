import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func assetUpload(token: String) throws -> AssetUpload? {
        try db.queryOne("""
            SELECT token, container_id, environment, owner, record_type, field_name, record_name, expires_at, checksum, size
            FROM asset_uploads WHERE token = ?
            """, [.text(token)]) { row in
            AssetUpload(token: row.text(0), container: row.text(1), environment: Environment(rawValue: row.text(2)) ?? .development,
                        owner: row.text(3), recordType: row.text(4), fieldName: row.text(5), recordName: Self.optionalText(row, 6),
                        expiresAt: row.int64(7), checksum: Self.optionalText(row, 8), size: row.isNull(9) ? nil : row.int64(9))
        }
    }

    func addAssetUpload(_ upload: AssetUpload) throws {
        try db.run("DELETE FROM asset_uploads WHERE expires_at < ? AND checksum IS NULL", [.integer(Clock.milliseconds())])
        try db.run("""
            INSERT INTO asset_uploads (token, container_id, environment, owner, record_type, field_name, record_name, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(upload.token), .text(upload.container), .text(upload.environment.rawValue), .text(upload.owner),
                  .text(upload.recordType), .text(upload.fieldName), upload.recordName.map(SQLiteValue.text) ?? .null,
                  .integer(upload.expiresAt)])
    }

    func completeAssetUpload(token: String, checksum: String, size: Int64) throws -> Bool {
        try db.run("UPDATE asset_uploads SET checksum = ?, size = ? WHERE token = ? AND checksum IS NULL",
                   [.text(checksum), .integer(size), .text(token)])
        return db.changes == 1
    }
}
