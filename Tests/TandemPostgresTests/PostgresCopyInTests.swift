import Foundation
import Testing
import TandemPostgres
import TandemTestSupport

/// `COPY … FROM STDIN (FORMAT binary)` through `PostgresConnection.copyIn` (decisions P40).
@Suite struct PostgresCopyInTests {
    static let columns: [(name: String, type: PostgresCopyType)] =
        [("id", .bigint), ("real", .doublePrecision), ("name", .text), ("data", .bytea), ("flag", .boolean)]

    private func table() throws -> PostgresConnection {
        let connection = try connect(try freshDatabase())
        try connection.execute("""
            CREATE TABLE item (id bigint PRIMARY KEY, "real" double precision, name text COLLATE "C", data bytea, flag boolean)
            """)
        return connection
    }

    @Test func everyTypeAndNullComesBackExactly() throws {
        let connection = try table()
        let rows: [[PostgresValue]] = [
            [.integer(Int64.min), .double(-0.0), .text(""), .bytes([]), .bool(false)],
            [.integer(Int64.max), .double(.infinity), .text("ünïcødé ✓ 𝄞 \n\t\\ \"quoted\""), .bytes([0, 1, 0xFF, 0]), .bool(true)],
            [.integer(0), .double(.leastNonzeroMagnitude), .null, .null, .null],
            [.integer(1), .double(-.infinity), .text("x"), .bytes((0..<256).map { UInt8($0) }), .null],
            [.integer(2), .null, .null, .null, .null],
        ]
        let copied = try connection.copyIn(table: "item", columns: Self.columns) { copy in
            for row in rows { try copy.append(row) }
        }
        #expect(copied == rows.count)
        let read = try connection.query("SELECT id, \"real\", name, data, flag FROM item ORDER BY id") { row in
            try (0..<5).map { try row.value($0) }
        }
        #expect(read == rows.sorted { if case .integer(let a) = $0[0], case .integer(let b) = $1[0] { a < b } else { false } })
        let negativeZero = try connection.queryOne("SELECT \"real\" FROM item WHERE id = $1", [.integer(Int64.min)]) { try $0.double(0) }
        #expect(negativeZero?.bitPattern == (-0.0 as Double).bitPattern)
    }

    /// More than one 1 MiB chunk: rows of 100 kB, and 50,000 small ones.
    @Test func manyChunksArriveWhole() throws {
        let connection = try table()
        let big = (0..<100_000).map { UInt8($0 % 251) }
        try connection.copyIn(table: "item", columns: Self.columns) { copy in
            for i in 0..<30 { try copy.append([.integer(Int64(i)), .null, .null, .bytes(big), .null]) }
            for i in 30..<50_030 { try copy.append([.integer(Int64(i)), .double(Double(i) / 3), .text("row \(i)"), .null, .bool(i % 2 == 0)]) }
        }
        #expect(try connection.queryOne("SELECT count(*), sum(length(data))::bigint FROM item") { [try $0.int64(0), try $0.int64(1)] } == [50_030, 3_000_000])
        #expect(try connection.queryOne("SELECT name FROM item WHERE id = 50029") { try $0.string(0) } == "row 50029")
    }

    @Test func aValueOfTheWrongTypeIsRefusedAndNothingIsCopied() throws {
        let connection = try table()
        #expect { try connection.copyIn(table: "item", columns: Self.columns) { copy in
            try copy.append([.integer(1), .null, .null, .null, .null])
            try copy.append([.text("2"), .null, .null, .null, .null])
        } } throws: { ($0 as? PostgresError)?.kind == .typeMismatch }
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 0)
        // The connection is usable afterwards.
        try connection.copyIn(table: "item", columns: Self.columns) { try $0.append([.integer(3), .null, .null, .null, .null]) }
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 1)
    }

    @Test func aRowTheServerRefusesFailsTheWholeCopy() throws {
        let connection = try table()
        #expect { try connection.copyIn(table: "item", columns: Self.columns) { copy in
            try copy.append([.integer(1), .null, .null, .null, .null])
            try copy.append([.integer(1), .null, .null, .null, .null])
        } } throws: { ($0 as? PostgresError)?.kind == .conflict }
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 0)
        #expect(try connection.queryOne("SELECT 1") { try $0.int64(0) } == 1)
    }

    @Test func textWithNulIsRefused() throws {
        let connection = try table()
        #expect { try connection.copyIn(table: "item", columns: Self.columns) { copy in
            try copy.append([.integer(1), .null, .text("a\u{0}b"), .null, .null])
        } } throws: { ($0 as? PostgresError)?.sqlState == "22021" }
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 0)
    }

    @Test func insideATransactionARollbackTakesTheRowsBack() throws {
        let connection = try table()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try connection.transaction { connection in
                try connection.copyIn(table: "item", columns: Self.columns) { try $0.append([.integer(1), .null, .null, .null, .null]) }
                #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 1)
                throw Stop()
            }
        }
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 0)
    }
}
