import Testing
import TandemCore

/// JSONWriter: compact UTF-8 text that JSONParser reads back to the same value.
@Suite struct JSONWriterTests {
    @Test func everyControlCharacterIsEscaped() {
        let controls = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
        let expected = #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\t\n\u000b\u000c\r\u000e\u000f"#
            + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#
        #expect(JSONWriter.string(.string(controls)) == expected)
    }

    @Test func quoteBackslashAndDeleteAreEscapedButSlashAndUnicodeAreNot() {
        #expect(JSONWriter.string(.string("a\"b\\c/d\u{7F}é😀")) == "\"a\\\"b\\\\c/d\\u007fé😀\"")
    }

    @Test(arguments: [
        "", "plain", "tab\there", "line\nbreak\r\n", "nul\u{0}inside", "\u{0}", "quote\"and\\back",
        "e\u{301} é", "👩‍👩‍👧 family", "日本語", "\u{7F}\u{1F}\u{80}\u{2028}\u{FFFF}", "\u{10FFFF}",
    ])
    func stringsRoundTripThroughTheParserScalarForScalar(_ text: String) throws {
        let back = try JSONParser.parse(JSONWriter.bytes(.string(text)))
        #expect(scalars(back.stringValue ?? "<not a string>") == scalars(text))
    }

    @Test func integersAreWrittenExactly() {
        #expect(JSONWriter.string([.int(Int64.min), .int(Int64.max), .int(0), .int(-1)])
                == "[-9223372036854775808,9223372036854775807,0,-1]")
    }

    @Test(arguments: [
        (0.1, "0.1"), (100.0, "100.0"), (-0.0, "-0.0"), (1e-300, "1e-300"), (1e-7, "1e-07"),
        (1e16, "1e+16"), (2.5, "2.5"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-122.0091, "-122.0091"),
    ])
    func doublesAreWrittenInShortestRoundTripFormAndReadBackAsDoubles(_ value: Double, _ text: String) throws {
        #expect(JSONWriter.string(.double(value)) == text)
        guard case .double(let back) = try JSONParser.parse(text) else {
            Issue.record("\(text) did not read back as a double"); return
        }
        #expect(back.bitPattern == value.bitPattern)
    }

    @Test func nonFiniteDoublesAreWrittenAsNull() {
        #expect(JSONWriter.string([.double(.nan), .double(.infinity), .double(-.infinity)]) == "[null,null,null]")
    }

    @Test func objectsAreWrittenInTheirKeyOrderWithoutWhitespace() {
        let value: JSONValue = ["value": ["b": 1, "a": [true, false, nil]], "type": "STRING"]
        #expect(JSONWriter.string(value) == #"{"value":{"b":1,"a":[true,false,null]},"type":"STRING"}"#)
    }

    @Test func emptyContainers() {
        #expect(JSONWriter.string(.array([])) == "[]")
        #expect(JSONWriter.string(.object(JSONObject())) == "{}")
    }

    @Test func keysAreEscapedLikeStrings() throws {
        let value = JSONValue.object(JSONObject([(key: "a\"b\n", value: .int(1))]))
        let text = JSONWriter.string(value)
        #expect(text == "{\"a\\\"b\\n\":1}")
        #expect(try JSONParser.parse(text) == value)
    }

    @Test func documentRoundTripsThroughTheParser() throws {
        let text = #"{"records":[{"recordName":"Mei Chen","fields":{"n":{"value":-9223372036854775808,"type":"INT64"},"d":{"value":-0.0,"type":"DOUBLE"},"s":{"value":"\u0000\u001f\"","type":"STRING"}},"deleted":false,"x":null}],"moreComing":true}"#
        let value = try JSONParser.parse(text)
        #expect(JSONWriter.string(value) == text)
        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
    }

    @Test func writeAppendsToExistingBytes() {
        var out = Array("prefix:".utf8)
        JSONWriter.write(.array([.int(1)]), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "prefix:[1]")
    }
}
