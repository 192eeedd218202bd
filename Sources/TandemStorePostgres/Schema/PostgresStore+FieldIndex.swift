internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// A record's `field_index` rows, one `value_*` column per type (decisions P18), and its
/// full-text entry (P17) (SQLite: `SQLiteStore+Schema.swift`).
extension PostgresStoreTransaction {
    /// How the fields of `recordType` are indexed in the zone's container environment: nil
    /// when that environment has no schema (every field in `field_index`, none searchable).
    func indexing(zoneKey: Int64, recordType: String) throws -> [String: IndexOptions]? {
        let rows = try db.query("""
            SELECT f.field, f.options FROM zones z JOIN schemas s ON s.container_id = z.container_id AND s.environment = z.environment
            LEFT JOIN schema_fields f ON f.container_id = z.container_id AND f.environment = z.environment AND f.record_type = $1
            WHERE z.id = $2
            """, [.text(recordType), .integer(zoneKey)]) { row in
            row.isNull(0) ? nil : (try row.string(0), IndexOptions(rawValue: try row.int64(1)))
        }
        guard !rows.isEmpty else { return nil }
        return Dictionary(rows.compactMap { $0 }, uniquingKeysWith: { a, _ in a })
    }

    /// Writes a record's `field_index` rows and its full-text entry, as `indexing` says.
    func writeIndexEntries(recordID: Int64, zoneKey: Int64, recordType: String, fields: [String: FieldValue],
                           indexing: [String: IndexOptions]?, fullText: Bool = true) throws {
        // Before anything is written: a record over the full-text limit is refused whole (P80).
        let searchable = Set((indexing ?? [:]).filter { $0.value.contains(.searchable) }.keys)
        let searchBody = fullText ? try FieldIndexer.searchBody(for: fields, searchable: searchable) : nil
        let included: (String) -> Bool = { name in
            guard let indexing else { return true }
            return !(indexing[name] ?? []).isDisjoint(with: [.queryable, .sortable])
        }
        // Several rows per INSERT (P54): one round trip for a typical record's fields, and at
        // most `fieldIndexRowsPerInsert` distinct SQL texts to prepare.
        let rows = FieldIndexer.rows(for: fields, including: included)
        var start = rows.startIndex
        while start < rows.endIndex {
            let chunk = rows[start..<min(start + Self.fieldIndexRowsPerInsert, rows.endIndex)]
            var arguments: [PostgresValue] = [.integer(recordID), .integer(zoneKey), .text(recordType)]
            for row in chunk {
                var typed: [PostgresValue] = [.null, .null, .null, .null]
                switch row.value {
                case .null: break
                case .integer(let value): typed[0] = .integer(value)
                case .real(let value): typed[1] = .double(value)
                case .text(let value): typed[2] = .text(IndexedText.escape(value))  // P50: text cannot hold NUL
                case .blob(let value): typed[3] = .bytes(value)
                }
                arguments += [.text(row.field), .integer(row.slot)] + typed
            }
            try db.runDeferred(Self.fieldIndexInsert(rows: chunk.count), arguments)
            start = chunk.endIndex
        }
        if let body = searchBody {
            // Tokens are letters and digits only (FieldIndexer.tokens), so a space separates them;
            // array_to_tsvector keeps each whole, as SQLite's ascii tokenizer does.
            try db.runDeferred("INSERT INTO field_search (record_id, body) VALUES ($1, array_to_tsvector(string_to_array($2, ' ')))",
                       [.integer(recordID), .text(body)])
        }
    }
}

extension PostgresStoreTransaction {
    /// Most `field_index` rows one INSERT carries.
    static let fieldIndexRowsPerInsert = 16

    /// `INSERT INTO field_index … VALUES (…), (…)` for `rows` rows: `$1`–`$3` are the record,
    /// zone and type every row shares, then six parameters per row (field, slot, and the four
    /// typed values, one of them set).
    static func fieldIndexInsert(rows: Int) -> String {
        let values = (0..<rows).map { row in
            let first = 4 + row * 6
            return "($1, $2, $3, $\(first), $\(first + 1), $\(first + 2)::bigint, $\(first + 3)::double precision, $\(first + 4)::text, $\(first + 5)::bytea)"
        }
        return "INSERT INTO field_index (record_id, zone_id, type, field, slot, value_integer, value_real, value_text, value_bytes) VALUES "
            + values.joined(separator: ", ")
    }
}
