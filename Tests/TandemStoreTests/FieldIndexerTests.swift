import Testing
import TandemCore
import TandemStore

/// Which `field_index` rows a field gets (decisions E31): its values, and a presence marker
/// only when it has no value row, since a value row already says the field is there.
@Suite struct FieldIndexerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var value: FieldValue
        /// (slot, value) of each row, in order.
        var rows: [String]
        var testDescription: String { label }
    }

    static let asset = Asset(fileChecksum: String(repeating: "a", count: 64), size: 3)

    static let cases: [Case] = [
        Case(label: "string", value: .string("Bench note"), rows: ["0 text(Bench note)"]),
        Case(label: "empty string", value: .string(""), rows: ["0 text()"]),
        Case(label: "int64", value: .int64(5), rows: ["0 integer(5)"]),
        Case(label: "double", value: .double(2.5), rows: ["0 real(2.5)"]),
        Case(label: "timestamp", value: .timestamp(1_700_000_000_000), rows: ["0 integer(1700000000000)"]),
        Case(label: "bytes", value: .bytes([1, 2]), rows: ["0 blob([1, 2])"]),
        Case(label: "reference", value: .reference(Reference(recordName: "r1")), rows: ["0 text(r1)"]),
        Case(label: "location", value: .location(Location(latitude: 48.85, longitude: 2.35)), rows: ["0 real(48.85)", "3 real(2.35)"]),
        Case(label: "asset: no value row, so the marker", value: .asset(asset), rows: ["9 null"]),
        Case(label: "empty list: the marker", value: .list([], of: .string), rows: ["9 null"]),
        Case(label: "list: each distinct member once", value: .list([.string("a"), .string("b"), .string("a")], of: .string),
             rows: ["0 text(a)", "0 text(b)"]),
        Case(label: "list of assets: the marker", value: .list([.asset(asset)], of: .asset), rows: ["9 null"]),
    ]

    static func describe(_ row: FieldIndexer.Row) -> String {
        let value = switch row.value {
        case .null: "null"
        case .integer(let i): "integer(\(i))"
        case .real(let d): "real(\(d))"
        case .text(let s): "text(\(s))"
        case .blob(let b): "blob(\(b))"
        }
        return "\(row.slot) \(value)"
    }

    @Test(arguments: cases) func rowsOfOneField(_ item: Case) {
        let rows = FieldIndexer.rows(for: ["f": item.value])
        #expect(rows.allSatisfy { $0.field == "f" })
        #expect(rows.map(Self.describe) == item.rows)
    }

    @Test func fieldsLeftOutGetNoRows() {
        let rows = FieldIndexer.rows(for: ["kept": .int64(1), "left": .list([], of: .string)], including: { $0 == "kept" })
        #expect(rows.map(\.field) == ["kept"])
    }
}
