import Testing
@testable import TandemHTTP

@Suite struct PercentEncodingTests {
    @Test func pathKeepsSafeCharactersAndEncodesTheRest() {
        let raw = Array("/a b/ü?#%".utf8)
        let encoded = raw.withUnsafeBufferPointer { PercentEncoding.encodePath($0) }
        #expect(encoded == "/a%20b/%C3%BC%3F%23%25")
    }

    @Test func queryEncodesNamesAndValuesSeparately() {
        let arguments: [ArraySlice<UInt8>] = [
            ArraySlice("a=b c".utf8), ArraySlice("x&y=1+2=3".utf8), ArraySlice("".utf8), ArraySlice("flag".utf8),
        ]
        #expect(PercentEncoding.encodeQuery(arguments) == "a=b%20c&x%26y=1%2B2%3D3&flag")
    }
}
