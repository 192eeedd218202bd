import Foundation
import TandemPostgres

/// Reference lines (d) and (e): what PostgreSQL alone reaches on this machine, in the same run,
/// for the work behind a lookup and a create, through Debian's `pgbench` (decisions P66). (d) is
/// printed beside the lookups, a reference: it shows whether 50% of the hello ceiling (a) is
/// within PostgreSQL's own reach here, where the database server, the load generator and Tandem
/// share the same two cores. (e) is "the same inserts through pgbench" of issue 19, so the
/// creates' ceiling when it is lower than (a) (P71).
///
/// - (d) `pgbench -S -c32 -j2`: single-row `SELECT` by primary key (scale 1), one transaction
///   each, a lookup's one statement (P63) without HTTP, JSON or Tandem.
/// - (e) a create's writes at `-c32 -j2`: in one transaction, the zone's change sequence
///   (`UPDATE … RETURNING`), the record row, two index rows, the change-log upsert and the feed
///   clock tick moving the zone (one shared row, as in the store, P54); no reads, no savepoints.
enum PgbenchReference {
    struct Result {
        var transactionsPerSecond: Double
        var clients: Int
    }

    /// The newest installed `pgbench` (`/usr/lib/postgresql/VERSION/bin`), or nil.
    static func executable() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin/pgbench" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// (d): `pgbench -i -s 1`, then `pgbench -S` for `seconds` on `url` (an empty database).
    static func selectOnly(url: String, seconds: Int, clients: Int = 32) throws -> Result {
        let pgbench = try require()
        try check(Shell.run(pgbench, ["-i", "-s", "1", "-q", url]), "pgbench -i")
        return try measure(pgbench, ["-S", "-n", "-c", String(clients), "-j", "2", "-T", String(seconds), url], clients: clients)
    }

    /// (e): the tables a create writes (columns cut to what the statements touch) and the script.
    static func createWrites(url: String, seconds: Int, clients: Int = 32) throws -> Result {
        let pgbench = try require()
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        try connection.execute("""
            CREATE TABLE zones (id bigint PRIMARY KEY, change_seq bigint NOT NULL, feed_seq bigint NOT NULL);
            INSERT INTO zones SELECT g, 0, 0 FROM generate_series(1, \(clients)) g;
            CREATE TABLE feed_clock (id int PRIMARY KEY, seq bigint NOT NULL);
            INSERT INTO feed_clock VALUES (1, 0);
            CREATE TABLE records (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, zone_id bigint NOT NULL, name text NOT NULL,
                type text NOT NULL, change_tag text NOT NULL, change_seq bigint NOT NULL, fields bytea NOT NULL,
                created_at bigint NOT NULL, UNIQUE (zone_id, name));
            CREATE TABLE field_index (record_id bigint NOT NULL, zone_id bigint NOT NULL, field text NOT NULL, value_text text,
                PRIMARY KEY (record_id, field));
            CREATE INDEX field_index_by_value ON field_index (zone_id, field, value_text);
            CREATE TABLE record_changes (zone_id bigint NOT NULL, record_name text NOT NULL, seq bigint NOT NULL,
                record_type text NOT NULL, PRIMARY KEY (zone_id, record_name));
            """)
        let script = """
            \\set zone :client_id + 1
            \\set n random(1, 1000000000000)
            BEGIN;
            UPDATE zones SET change_seq = change_seq + 1 WHERE id = :zone RETURNING change_seq;
            INSERT INTO records (zone_id, name, type, change_tag, change_seq, fields, created_at) VALUES (:zone, 'r' || :n, 'Note', 'tag', 1, '\\x0a0b0c0d0e0f', 0) RETURNING id;
            INSERT INTO field_index VALUES (lastval(), :zone, 'title', 'a title'), (lastval(), :zone, 'done', 'false');
            INSERT INTO record_changes VALUES (:zone, 'r' || :n, 1, 'Note') ON CONFLICT (zone_id, record_name) DO UPDATE SET seq = excluded.seq;
            WITH tick AS (UPDATE feed_clock SET seq = seq + 1 WHERE id = 1 RETURNING seq) UPDATE zones SET feed_seq = (SELECT seq FROM tick) WHERE id = :zone;
            COMMIT;

            """
        let file = NSTemporaryDirectory() + "tandem-bench-create-\(UUID().uuidString).sql"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try measure(pgbench, ["-n", "-f", file, "-c", String(clients), "-j", "2", "-T", String(seconds), url], clients: clients)
    }

    private static func require() throws -> String {
        guard let pgbench = executable() else { throw BenchError("no pgbench under /usr/lib/postgresql/*/bin (Debian's postgresql package has it)") }
        return pgbench
    }

    private static func measure(_ pgbench: String, _ arguments: [String], clients: Int) throws -> Result {
        let output = try check(Shell.run(pgbench, arguments), "pgbench")
        // "tps = 1234.567890 (without initial connection time)"
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
              let tps = Double(line.dropFirst(6).prefix { $0 != " " }) else {
            throw BenchError("pgbench printed no tps line: \(output.suffix(400))")
        }
        return Result(transactionsPerSecond: tps, clients: clients)
    }

    @discardableResult
    private static func check(_ output: Shell.Output, _ what: String) throws -> String {
        guard output.status == 0 else { throw BenchError("\(what) failed (\(output.status)): \(output.stderr.suffix(400))") }
        return output.stdout
    }
}
