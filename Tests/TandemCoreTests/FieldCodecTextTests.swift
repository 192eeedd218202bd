import Testing
import TandemCore

/// STRING values keep every Unicode scalar (no normalisation), NUL included; BYTES carry every
/// byte value through standard base64.
@Suite struct FieldCodecTextTests {
    struct TextCase: Sendable, CustomTestStringConvertible {
        let label: String
        /// The JSON string literal as a client writes it (escaped or raw UTF-8).
        let literal: String
        let scalars: [UInt32]
        /// The literal as the server writes it back.
        let written: String
        var testDescription: String { label }
    }

    static let texts: [TextCase] = [
        TextCase(label: "emoji as surrogate escapes", literal: #""\ud83d\ude00""#, scalars: [0x1F600], written: "\"😀\""),
        TextCase(label: "ZWJ family", literal: "\"👩‍👩‍👧\"", scalars: [0x1F469, 0x200D, 0x1F469, 0x200D, 0x1F467],
                 written: "\"👩‍👩‍👧\""),
        TextCase(label: "flag", literal: "\"🇯🇵\"", scalars: [0x1F1EF, 0x1F1F5], written: "\"🇯🇵\""),
        TextCase(label: "combining acute is not composed", literal: #""e\u0301""#, scalars: [0x65, 0x301], written: "\"e\u{301}\""),
        TextCase(label: "precomposed é is not decomposed", literal: #""\u00e9""#, scalars: [0xE9], written: "\"é\""),
        TextCase(label: "NUL inside", literal: #""a\u0000b""#, scalars: [0x61, 0, 0x62], written: #""a\u0000b""#),
        TextCase(label: "only NUL", literal: #""\u0000""#, scalars: [0], written: #""\u0000""#),
        TextCase(label: "controls", literal: #""\t\n\u001f""#, scalars: [9, 10, 0x1F], written: #""\t\n\u001f""#),
        TextCase(label: "CJK raw", literal: "\"日本語\"", scalars: [0x65E5, 0x672C, 0x8A9E], written: "\"日本語\""),
        TextCase(label: "highest scalar", literal: #""\udbff\udfff""#, scalars: [0x10FFFF], written: "\"\u{10FFFF}\""),
        TextCase(label: "BOM and line separator", literal: #""\ufeff\u2028""#, scalars: [0xFEFF, 0x2028], written: "\"\u{FEFF}\u{2028}\""),
    ]

    @Test(arguments: texts)
    func stringValueKeepsEveryScalar(_ c: TextCase) throws {
        let value = try decodeField(#"{"value":\#(c.literal),"type":"STRING"}"#)
        guard case .string(let s) = value else { Issue.record("not a string: \(value)"); return }
        #expect(scalars(s) == c.scalars)
        #expect(wire(value) == #"{"value":\#(c.written),"type":"STRING"}"#)
    }

    @Test(arguments: texts)
    func stringWrittenBackDecodesToTheSameScalars(_ c: TextCase) throws {
        let value = try decodeField(#"{"value":\#(c.literal),"type":"STRING"}"#)
        guard case .string(let back) = try decodeField(wire(value)) else { Issue.record("not a string"); return }
        #expect(scalars(back) == c.scalars)
    }

    @Test func unicodeInsideStringListsIsKept() throws {
        let value = try decodeField(#"{"value":["e\u0301","\u0000"],"type":"STRING_LIST"}"#)
        guard case .list(let items, .string) = value, items.count == 2,
              case .string(let first) = items[0], case .string(let second) = items[1] else {
            Issue.record("unexpected \(value)"); return
        }
        #expect(scalars(first) == [0x65, 0x301])
        #expect(scalars(second) == [0])
    }

    static let allBytesBase64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w=="

    @Test func bytesCarryAll256ValuesInBothDirections() throws {
        let text = #"{"value":"\#(Self.allBytesBase64)","type":"BYTES"}"#
        let value = try decodeField(text)
        #expect(value == .bytes((0...255).map { UInt8($0) }))
        #expect(wire(value) == text)
    }

    @Test(arguments: [([UInt8](), ""), ([0xFF], "/w=="), ([0xFB, 0xFF], "+/8="), ([0, 0, 0], "AAAA"), ([0x61, 0x62, 0x63, 0x64], "YWJjZA==")])
    func bytesUseStandardPaddedBase64(_ bytes: [UInt8], _ base64: String) throws {
        #expect(wire(.bytes(bytes)) == #"{"value":"\#(base64)","type":"BYTES"}"#)
        #expect(try decodeField(#"{"value":"\#(base64)","type":"BYTES"}"#) == .bytes(bytes))
    }

    @Test func escapedSlashInBase64IsAccepted() throws {
        #expect(try decodeField(#"{"value":"\/w==","type":"BYTES"}"#) == .bytes([0xFF]))
    }
}
