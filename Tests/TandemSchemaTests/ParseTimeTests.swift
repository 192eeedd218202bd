import Foundation
import Testing
import TandemSchema

/// Prints how long the largest fixture takes to parse (a figure for the issue note, never asserted).
@Suite struct ParseTimeTests {
    @Test func printParseTimeOfLargestFixture() throws {
        let sizes = try Fixtures.names.map { ($0, try Fixtures.text($0).utf8.count) }
        let (name, size) = try #require(sizes.max { $0.1 < $1.1 })
        let text = try Fixtures.text(name)
        let rounds = 200
        let clock = ContinuousClock()
        var types = 0
        let elapsed = try clock.measure {
            for _ in 0..<rounds { types += try Schema(parsing: text, file: name).recordTypes.count }
        }
        let perParse = elapsed / rounds
        print("schema parse: \(name) (\(size) bytes, \(types / rounds) record types): \(perParse) per parse, mean of \(rounds)")
    }
}
