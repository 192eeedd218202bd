import Testing
import TandemCore

/// JSONParser (Jansson): strict RFC 8259, exact 64-bit integers, errors with line and column.
@Suite struct JSONParserTests {
    @Test func integersKeepAll64Bits() throws {
        #expect(try json("9223372036854775807") == .int(Int64.max))
        #expect(try json("-9223372036854775808") == .int(Int64.min))
        #expect(try json("[9007199254740993]") == .array([.int(9_007_199_254_740_993)]))
    }

    @Test func numbersWithFractionOrExponentAreDoubles() throws {
        #expect(try json("1") == .int(1))
        #expect(try json("1.0") == .double(1.0))
        #expect(try json("1e2") == .double(100))
        #expect(try json("-2.5E-3") == .double(-0.0025))
        #expect(try json("1e-300") == .double(1e-300))
    }

    @Test func negativeZeroKeepsItsSign() throws {
        guard case .double(let d) = try json("-0.0") else { Issue.record("not a double"); return }
        #expect(d == 0 && d.sign == .minus)
    }

    @Test func scalarsAreAcceptedAtTopLevel() throws {
        #expect(try json("\"x\"") == .string("x"))
        #expect(try json("true") == .bool(true))
        #expect(try json("false") == .bool(false))
        #expect(try json("null") == .null)
        #expect(try json("  42 \n") == .int(42))
    }

    @Test func objectsKeepKeyOrder() throws {
        guard case .object(let object) = try json(#"{"zeta":1,"alpha":2,"mid":{"b":1,"a":2}}"#) else {
            Issue.record("not an object"); return
        }
        #expect(object.keys == ["zeta", "alpha", "mid"])
        #expect(object["mid"]?.objectValue?.keys == ["b", "a"])
    }

    @Test func escapedNulStaysInsideTheString() throws {
        #expect(try json(#""a\u0000b""#) == .string("a\u{0}b"))
        #expect(try json(#""\u0000""#).stringValue?.utf8.count == 1)
    }

    @Test func surrogatePairEscapesDecodeToOneScalar() throws {
        let value = try json(#""\ud83d\ude00""#)
        #expect(scalars(value.stringValue ?? "") == [0x1F600])
    }

    @Test func allEscapesDecode() throws {
        let value = try json(#""\"\\\/\b\f\n\r\t\u00e9""#)
        #expect(scalars(value.stringValue ?? "") == [0x22, 0x5C, 0x2F, 0x08, 0x0C, 0x0A, 0x0D, 0x09, 0xE9])
    }

    // MARK: Refusals, with position

    struct Malformed: Sendable, CustomTestStringConvertible {
        let text: String
        let message: String
        let line: Int
        let column: Int
        var testDescription: String { text.debugDescription }
    }

    @Test(arguments: [
        Malformed(text: "[1,2,]", message: "unexpected token near ']'", line: 1, column: 6),
        Malformed(text: "{\"a\":1,}", message: "string or '}' expected near '}'", line: 1, column: 8),
        Malformed(text: "{\"a\":1 // note\n}", message: "'}' expected near '/'", line: 1, column: 8),
        Malformed(text: "[1, /* note */ 2]", message: "invalid token near '/'", line: 1, column: 5),
        Malformed(text: "{\"a\":1,\n \"a\":2}", message: "duplicate object key near '\"a\"'", line: 2, column: 4),
        Malformed(text: "9223372036854775808", message: "too big integer near '9223372036854775808'", line: 1, column: 19),
        Malformed(text: "[-9223372036854775809]", message: "too big negative integer near '-9223372036854775809'", line: 1, column: 21),
        Malformed(text: "{\"records\": [\n  {\"recordName\": \"a\"", message: "'}' expected near end of file", line: 2, column: 20),
        Malformed(text: "{\"a\":", message: "unexpected token near end of file", line: 1, column: 5),
        Malformed(text: "[NaN]", message: "invalid token near 'NaN'", line: 1, column: 4),
        Malformed(text: "[Infinity]", message: "invalid token near 'Infinity'", line: 1, column: 9),
        Malformed(text: "[1e400]", message: "real number overflow near '1e400'", line: 1, column: 6),
        Malformed(text: "{} {}", message: "end of file expected near '{'", line: 1, column: 4),
        Malformed(text: "", message: "unexpected token near end of file", line: 1, column: 0),
        Malformed(text: "[\"\\ud800\"]", message: "invalid Unicode '\\uD800' near '\"\\ud800\"'", line: 1, column: 9),
        Malformed(text: "[\"a\tb\"]", message: "control character 0x9 near '\"a'", line: 1, column: 3),
    ])
    func malformedTextIsRefusedWithPosition(_ c: Malformed) {
        guard let error = parseFailure(c.text) else { return }
        #expect(error.message == c.message)
        #expect(error.line == c.line)
        #expect(error.column == c.column)
        #expect(error.description == "line \(c.line), column \(c.column): \(c.message)")
    }

    @Test func aRawNulByteIsRefusedWhereverItStands() {
        let trailing = parseFailure(Array(#"{"a":1}"#.utf8) + [0] + Array("garbage".utf8))
        #expect(trailing?.message == "NUL byte in JSON text")
        #expect(trailing?.position == 7)
        let leading = parseFailure([0] + Array("{}".utf8))
        #expect(leading?.position == 0)
        let inString = parseFailure(Array("[\n\"a".utf8) + [0] + Array("b\"]".utf8))
        #expect(inString?.line == 2)
        #expect(inString?.column == 3)
    }

    @Test func errorPositionIsTheByteOffset() {
        let error = parseFailure("[1,\n2,]")
        #expect(error?.line == 2)
        #expect(error?.position == 7)
    }

    @Test func invalidUTF8IsRefused() {
        let error = parseFailure([0x22, 0x61, 0xFF, 0x22])
        #expect(error?.message == "unable to decode byte 0xff near '\"a'")
        #expect(error?.column == 2)
        #expect(error?.line == 1)
    }

    @Test func nestingBeyondTheParserLimitIsRefused() {
        let deep = String(repeating: "[", count: 2049) + String(repeating: "]", count: 2049)
        let error = parseFailure(deep)
        #expect(error?.message == "maximum parsing depth reached near '['")
        #expect(error?.column == 2049)
    }

    @Test func deepestAllowedNestingConvertsWritesAndCompares() throws {
        // A scalar inside 2047 arrays is at Jansson's depth limit (2048); conversion, writing, equality and release all recurse.
        let depth = 2047
        let text = String(repeating: "[", count: depth) + "7" + String(repeating: "]", count: depth)
        let parsed = try json(text)
        #expect(JSONWriter.string(parsed) == text)
        #expect(try json(text) == parsed)
        var value = parsed
        for _ in 0..<depth {
            guard let inner = value.arrayValue?.first else { Issue.record("lost nesting"); return }
            value = inner
        }
        #expect(value == .int(7))
    }
}
