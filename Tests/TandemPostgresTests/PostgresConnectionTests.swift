import Foundation
import Testing
import TandemPostgres
import TandemTestSupport

@Suite struct PostgresConnectionTests {
    @Test func connectsAndQueries() throws {
        let connection = try connect(try freshDatabase())
        let answer = try connection.queryOne("SELECT 41 + $1::int", [.integer(1)]) { try $0.int64(0) }
        #expect(answer == 42)
        #expect(try connection.query("SELECT generate_series(1, 3)") { try $0.int64(0) } == [1, 2, 3])
        #expect(try connection.queryOne("SELECT 1 WHERE false") { try $0.int64(0) } == nil)
    }

    /// Each value goes in as a parameter of the column's type and comes back identical.
    @Test(arguments: [
        ("bigint", PostgresValue.integer(0)), ("bigint", .integer(Int64.max)), ("bigint", .integer(Int64.min)),
        ("bigint", .integer(-1)), ("double precision", .double(0.1)), ("double precision", .double(-0.0)),
        ("double precision", .double(.greatestFiniteMagnitude)), ("double precision", .double(.leastNonzeroMagnitude)),
        ("double precision", .double(.infinity)), ("double precision", .double(-.infinity)),
        ("double precision", .double(1e-300)), ("double precision", .double(123456789.123456789)),
        ("text", .text("")), ("text", .text("plain")), ("text", .text("ünïcødé ✓ 𝄞 日本語 \u{202E}")),
        ("text", .text("quote ' backslash \\ newline \n tab \t")),
        ("bytea", .bytes([])), ("bytea", .bytes([0, 1, 2, 0xFF, 0])), ("bytea", .bytes((0..<256).map { UInt8($0) })),
        ("boolean", .bool(true)), ("boolean", .bool(false)),
        ("bigint", .null), ("text", .null), ("bytea", .null), ("double precision", .null), ("boolean", .null),
    ])
    func valueRoundTrips(type: String, value: PostgresValue) throws {
        let connection = try connect(try freshDatabase())
        try connection.execute("CREATE TABLE item (value \(type))")
        try connection.run("INSERT INTO item (value) VALUES ($1)", [value])
        let read = try connection.queryOne("SELECT value FROM item") { try $0.value(0) }
        #expect(read == value)
        if case .double(let number) = value, case .double(let back)? = read {
            #expect(number.bitPattern == back.bitPattern)
        }
    }

    @Test func nanRoundTrips() throws {
        let connection = try connect(try freshDatabase())
        let read = try connection.queryOne("SELECT $1::float8", [.double(.nan)]) { try $0.double(0) }
        #expect(read?.isNaN == true)
    }

    @Test func largeByteaRoundTrips() throws {
        let connection = try connect(try freshDatabase())
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(8 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try connection.execute("CREATE TABLE blob (value bytea)")
        try connection.run("INSERT INTO blob (value) VALUES ($1)", [.bytes(bytes)])
        #expect(try connection.queryOne("SELECT value FROM blob") { try $0.bytes(0) } == bytes)
        #expect(try connection.queryOne("SELECT length(value) FROM blob") { try $0.int64(0) } == Int64(bytes.count))
    }

    @Test func narrowerIntegersAndFloatsReadAsWide() throws {
        let connection = try connect(try freshDatabase())
        let row = try connection.queryOne("SELECT 7::smallint, 8::int, 2.5::real, 'x'::varchar, 'y'::char(2), 'n'::name") {
            (try $0.int64(0), try $0.int64(1), try $0.double(2), try $0.string(3), try $0.string(4), try $0.string(5))
        }
        #expect(row?.0 == 7 && row?.1 == 8 && row?.2 == 2.5 && row?.3 == "x" && row?.4 == "y " && row?.5 == "n")
    }

    @Test func nullAndWrongTypeReadsThrowTypeMismatch() throws {
        let connection = try connect(try freshDatabase())
        try connection.queryOne("SELECT NULL::bigint, 'text', 1.5::numeric") { row in
            #expect(row.isNull(0))
            #expect(throws: PostgresError.self) { try row.int64(0) }
            #expect(throws: PostgresError.self) { try row.int64(1) }
            do { _ = try row.string(2); Issue.record("numeric read as text") }
            catch let error as PostgresError { #expect(error.kind == .typeMismatch) }
            #expect(try row.value(0) == .null)
        }
    }

    @Test func textWithNulIsRefusedBeforeSending() throws {
        let connection = try connect(try freshDatabase())
        do {
            try connection.run("SELECT $1::text", [.text("a\u{0}b")])
            Issue.record("NUL accepted")
        } catch {
            #expect(error.sqlState == "22021")
        }
        #expect(try connection.queryOne("SELECT 1") { try $0.int64(0) } == 1)
    }

    @Test func eachSQLTextIsPreparedOnce() throws {
        let connection = try connect(try freshDatabase())
        try connection.execute("CREATE TABLE item (name text)")
        for index in 0..<5 { try connection.run("INSERT INTO item (name) VALUES ($1)", [.text("n\(index)")]) }
        #expect(connection.cachedStatementCount == 1)
        let prepared = try connection.query("SELECT statement FROM pg_prepared_statements") { try $0.string(0) }
        #expect(prepared.filter { $0.hasPrefix("INSERT INTO item") }.count == 1)
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 5)
    }

    @Test func runReturnsTheRowsTouched() throws {
        let connection = try connect(try freshDatabase())
        try connection.execute("CREATE TABLE item (n bigint); INSERT INTO item SELECT generate_series(1, 10)")
        #expect(try connection.run("UPDATE item SET n = n + 1 WHERE n > $1", [.integer(6)]) == 4)
        #expect(try connection.run("DELETE FROM item") == 10)
    }

    @Test func statementTimeoutIsTimedOut() throws {
        let connection = try connect(try freshDatabase(), statementTimeout: .milliseconds(200))
        do {
            try connection.run("SELECT pg_sleep(10)")
            Issue.record("pg_sleep(10) finished under a 200 ms timeout")
        } catch {
            #expect(error.kind == .timedOut)
            #expect(error.sqlState == "57014")
        }
        #expect(try connection.queryOne("SELECT 1") { try $0.int64(0) } == 1)
    }

    @Test func unreachableServerIsUnavailable() throws {
        let cluster = try PostgresCluster.shared()
        // The cluster's own port with a database that does not exist, and a port nothing listens on.
        for url in [cluster.url(database: "no_such_database"), "postgres://postgres@127.0.0.1:1/x?connect_timeout=2"] {
            do {
                _ = try connect(url)
                Issue.record("connected to \(url)")
            } catch let error as PostgresError {
                #expect(error.kind == .unavailable)
                #expect(!error.message.isEmpty)
            }
        }
    }

    @Test func closedConnectionRefusesCalls() throws {
        let connection = try connect(try freshDatabase())
        connection.close()
        connection.close()
        #expect(!connection.isHealthy)
        #expect(throws: PostgresError.self) { try connection.run("SELECT 1") }
    }
}
