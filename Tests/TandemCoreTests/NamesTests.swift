import Testing
import TandemCore

/// Name rules of decisions D12: record and zone names are 1–255 printable ASCII characters;
/// field names are a letter, then letters, digits or `_`; names starting with `_` are the system's.
@Suite struct NamesTests {
    @Test(arguments: [
        "a", "Mei Chen", "101", " ", "~", "_defaultZone", "cloudkit.zoneshare", "a/b?c#d%e", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        String(repeating: "x", count: 255),
    ])
    func printableASCIIRecordAndZoneNamesAreValid(_ name: String) {
        #expect(Names.isValidRecordOrZoneName(name))
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 256), "café", "e\u{301}", "😀", "tab\t", "line\n", "nul\u{0}", "del\u{7F}",
        "\u{A0}", "\u{1F}",
    ])
    func emptyLongOrNonPrintableRecordAndZoneNamesAreInvalid(_ name: String) {
        #expect(!Names.isValidRecordOrZoneName(name))
    }

    @Test func theRecordNameLimitCountsUTF8Bytes() {
        #expect(Limits.nameLength == 255)
        #expect(!Names.isValidRecordOrZoneName(String(repeating: "é", count: 100)))
    }

    @Test(arguments: ["a", "Z", "firstName", "width2", "a_b", "A_", "CD_entity", "x1_2_3", String(repeating: "f", count: 255)])
    func fieldNamesThatStartWithALetterAreValid(_ name: String) {
        #expect(Names.isValidFieldName(name))
    }

    @Test(arguments: [
        "", "_private", "___recordID", "1st", "a-b", "a b", "a.b", "é", "naïve", "a\u{0}", String(repeating: "f", count: 256),
        "😀", "$a",
    ])
    func otherFieldNamesAreInvalid(_ name: String) {
        #expect(!Names.isValidFieldName(name))
    }

    @Test(arguments: [("Artist", true), ("cloudkit.share", true), ("Users", true), ("_Users", false), ("cloudkit.other", false),
                      ("Art-work", false), ("", false), ("9Lives", false)])
    func recordTypesFollowTheFieldGrammarPlusTheShareType(_ name: String, _ valid: Bool) {
        #expect(Names.isValidRecordType(name) == valid)
    }
}
