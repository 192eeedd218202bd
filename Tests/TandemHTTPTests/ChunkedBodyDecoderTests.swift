import Testing
@testable import TandemHTTP

@Suite struct ChunkedBodyDecoderTests {
    func decode(_ pieces: [String], limit: Int = 1 << 20) -> (ChunkedBodyDecoder.Outcome, String) {
        var decoder = ChunkedBodyDecoder()
        var body: [UInt8] = []
        var outcome = ChunkedBodyDecoder.Outcome.needMore
        for piece in pieces {
            outcome = Array(piece.utf8).withUnsafeBytes { decoder.feed($0, into: &body, limit: limit) }
            if outcome != .needMore { break }
        }
        return (outcome, String(decoding: body, as: UTF8.self))
    }

    @Test func decodesChunksSplitAnywhere() {
        let wire = "4\r\nWiki\r\n5;name=value\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"
        for split in 0...wire.utf8.count {
            let bytes = Array(wire.utf8)
            let pieces = [String(decoding: bytes[..<split], as: UTF8.self), String(decoding: bytes[split...], as: UTF8.self)]
            let (outcome, body) = decode(pieces)
            let count = bytes.count
            #expect(outcome == .complete(consumed: split == count ? count : count - split))
            #expect(body == "Wikipedia in\r\n\r\nchunks.")
        }
    }

    @Test func reportsHowMuchOfTheLastInputWasBody() {
        let (outcome, body) = decode(["3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1"])
        #expect(outcome == .complete(consumed: 13))
        #expect(body == "abc")
    }

    @Test func acceptsBareLineFeeds() {
        #expect(decode(["3\nabc\n0\n\n"]) == (.complete(consumed: 9), "abc"))
    }

    @Test(arguments: ["x\r\n", "3\r\nabcX", "3\r\nabc\rX", "\r\n", "3 \r\nabc\r\n0\r\n\rX"])
    func rejectsBrokenFraming(_ wire: String) {
        #expect(decode([wire]).0 == .malformed)
    }

    @Test func stopsAtTheLimit() {
        #expect(decode(["5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n"], limit: 8).0 == .tooLarge)
        #expect(decode(["FFFFFFFFFFFFFFFFFFFF\r\n"], limit: 8).0 == .tooLarge)
        #expect(decode(["4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n"], limit: 8) == (.complete(consumed: 23), "abcdefgh"))
    }
}

@Suite struct HeaderValueTests {
    @Test func headersAreLookedUpIgnoringCase() {
        var headers = HTTPHeaders([("Content-Type", "application/json"), ("X-A", "1")])
        headers.add(name: "x-a", value: "2")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["x-a"] == "1")
        #expect(headers.values(for: "X-A") == ["1", "2"])
        #expect(headers["content-typ"] == nil)
        #expect(headers.count == 3)
    }

    @Test(arguments: [
        ("0", RequestHeadReader.ContentLength.value(0)),
        ("12345", .value(12345)),
        ("", .malformed),
        ("-1", .malformed),
        ("+1", .malformed),
        ("1,1", .malformed),
        ("1 2", .malformed),
        ("99999999999999999999999", .malformed),
    ])
    func contentLengthIsStrict(value: String, expected: RequestHeadReader.ContentLength) {
        #expect(RequestHeadReader.parseContentLength(value) == expected)
    }

    @Test func keepAliveFollowsVersionAndConnectionHeader() {
        #expect(RequestHeadReader.keepAlive(isHTTP11: true, connection: nil))
        #expect(!RequestHeadReader.keepAlive(isHTTP11: true, connection: "Close"))
        #expect(!RequestHeadReader.keepAlive(isHTTP11: false, connection: nil))
        #expect(RequestHeadReader.keepAlive(isHTTP11: false, connection: "keep-alive"))
    }
}
