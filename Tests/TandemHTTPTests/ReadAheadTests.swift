import Testing
@testable import TandemHTTP

/// Whether lws has read from the socket since a transaction ended, from one reading of the
/// kernel (`ReadAhead.compare`; decisions E3, E37, E46).
@Suite struct ReadAheadTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var testDescription: String
        var bytes: UInt64
        var exact = true
        var slack: UInt64 = 0
        var fin = false
        var expected: ReadAhead.Comparison
    }

    /// The mark is 1,000 bytes read.
    static let cases: [Case] = [
        Case(testDescription: "an exact reading at the mark: nothing read", bytes: 1_000, expected: .nothingRead),
        Case(testDescription: "an exact reading past it: read", bytes: 1_001, expected: .readSince),
        Case(testDescription: "a FIN counted in the total is not a byte read", bytes: 1_001, fin: true, expected: .nothingRead),
        Case(testDescription: "one byte and a FIN", bytes: 1_002, fin: true, expected: .readSince),
        Case(testDescription: "bytes arriving during the reading, the lower bound past the mark: read",
             bytes: 1_500, exact: false, slack: 65_536, expected: .readSince),
        Case(testDescription: "bytes arriving during the reading, the upper bound at the mark: nothing read",
             bytes: 900, exact: false, slack: 100, expected: .nothingRead),
        Case(testDescription: "a 64 KiB segment arriving during the reading of a head lws read: unsure, look again",
             bytes: 1_000 + 65_520 - 65_536, exact: false, slack: 65_536, expected: .unsure),
    ]

    @Test(arguments: cases)
    func aReadingAgainstTheMark(_ c: Case) {
        #expect(ReadAhead.compare(mark: 1_000, bytes: c.bytes, exact: c.exact, slack: c.slack, finReceived: c.fin) == c.expected)
    }
}
