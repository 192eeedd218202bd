import Testing
import TandemStore
import TandemSQLite
import TandemStoreSQLite

@Suite struct SQLiteValueTests {
    static let roundTripCases: [SQLiteValue] = [
        .null,
        .integer(0), .integer(-1), .integer(Int64.min), .integer(Int64.max),
        .real(1.5), .real(-0.0), .real(.infinity), .real(-.infinity),
        .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude), .real(2.0),
        .text(""), .text("zone"), .text("Grüße, 東京 🚀"), .text("a\u{0}b"), .text("\u{0}"),
        .blob([]), .blob([0]), .blob([0, 1, 2, 255]), .blob([UInt8](repeating: 0xAB, count: 64)),
    ]

    /// A column without a declared type has no affinity: what is bound is what comes back.
    @Test(arguments: roundTripCases)
    func valueRoundTripsExactly(_ value: SQLiteValue) throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t(v)")
        try connection.run("INSERT INTO t(v) VALUES (?)", [value])
        let back = try connection.queryOne("SELECT v FROM t") { $0.value(0) }
        #expect(back == value)
        if case .real(let number) = value, case .real(let returned)? = back {
            #expect(number.sign == returned.sign, "the sign of zero survives")
        }
    }

    @Test func emptyBlobIsABlobNotNull() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t(v)")
        try connection.run("INSERT INTO t(v) VALUES (?), (?)", [.blob([]), .null])
        let rows = try connection.query("SELECT typeof(v), v IS NULL, length(v) FROM t ORDER BY rowid") {
            ($0.text(0), $0.int64(1), $0.isNull(2))
        }
        #expect(rows.map(\.0) == ["blob", "null"])
        #expect(rows.map(\.1) == [0, 1])
        #expect(rows.map(\.2) == [false, true])
    }

    /// The server's store refuses text holding NUL as PostgreSQL does, except inside
    /// `allowingTextWithNUL`, and its error maps to `invalidText` (decision P62).
    @Test func aConnectionThatRefusesNULTextThrowsAndWritesNothing() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t(v)")
        connection.refusesTextWithNUL = true
        let refused = #expect(throws: SQLiteError.self) { try connection.run("INSERT INTO t(v) VALUES (?)", [.text("a\u{0}b")]) }
        #expect(refused?.isTextWithNUL == true)
        #expect(refused.map { StoreError($0).kind } == .invalidText)
        try connection.run("INSERT INTO t(v) VALUES (?)", [.text("plain")])
        try connection.allowingTextWithNUL { try connection.run("INSERT INTO t(v) VALUES (?)", [.text("a\u{0}b")]) }
        #expect(connection.refusesTextWithNUL, "restored after the body")
        #expect(try connection.query("SELECT v FROM t ORDER BY rowid") { $0.value(0) } == [.text("plain"), .text("a\u{0}b")])
        // NaN is refused with the same result code, but it is not text with NUL.
        let nan = #expect(throws: SQLiteError.self) { try connection.run("INSERT INTO t(v) VALUES (?)", [.real(.nan)]) }
        #expect(nan?.isTextWithNUL == false)
    }

    @Test func textKeepsNULCharactersThatSQLFunctionsStopAt() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        let row = try connection.queryOne(
            "SELECT ?1, length(CAST(?1 AS BLOB)), length(?1)", [.text("a\u{0}bc")]
        ) { ($0.text(0), $0.int64(1), $0.int64(2)) }
        #expect(row?.0 == "a\u{0}bc")
        #expect(row?.1 == 4, "all four bytes are stored")
        #expect(row?.2 == 1, "SQLite's length() counts characters up to the first NUL")
    }

    /// SQLite stores NaN as NULL, which would turn bad input into a silent NULL (or a
    /// confusing NOT NULL failure); binding it is refused instead.
    @Test func nanIsRefusedBecauseSQLiteWouldStoreNull() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t(v)")
        let error = #expect(throws: SQLiteError.self) {
            try connection.run("INSERT INTO t(v) VALUES (?)", [.real(.nan)])
        }
        #expect(error?.code == .mismatch)
        #expect(try connection.queryOne("SELECT count(*) FROM t") { $0.int64(0) } == 0)
        // What SQLite itself does with a NaN it computes:
        #expect(try connection.queryOne("SELECT typeof(9e999 - 9e999)") { $0.text(0) } == "null")
    }

    /// REAL affinity stores integral reals as integers on disk, which loses the sign of zero.
    @Test func realColumnLosesTheSignOfZero() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t(v REAL)")
        try connection.run("INSERT INTO t(v) VALUES (?), (?)", [.real(-0.0), .real(3.0)])
        let back = try connection.query("SELECT v FROM t ORDER BY rowid") { $0.value(0) }
        #expect(back == [.real(0.0), .real(3.0)])
        if case .real(let zero) = back.first {
            #expect(zero.sign == .plus)
        }
    }

    @Test func literalsBuildValues() {
        let values: [SQLiteValue] = [42, 1.5, "text"]
        #expect(values == [.integer(42), .real(1.5), .text("text")])
    }
}
