import Foundation
import Testing
@testable import TandemServer

/// The byte-level readers every request goes through (decisions E17) give what the
/// Character-wise code they replace gave.
@Suite struct RequestParsingTests {
    static let paths = [
        "", "/", "//", "/a", "a/", "/database/1/iCloud.com.example/development/private/records/lookup",
        "/tandem/1/iCloud.x/development/schema", "/database/1//development/", "/é/ü/ß/👩‍👩‍👧", "/a//b///c/", "no-slash", "/a/\u{301}b/c",
        "a/\u{301}b/c", "abc/\u{301}", "iCloud.x/\u{301}development/private", "\u{301}/a", "a\u{301}/b",
    ]

    @Test(arguments: paths)
    func pathSegmentsAreTheCharacterSplit(path: String) {
        let split: [Substring] = path.split(separator: "/", omittingEmptySubsequences: false)
        #expect(path.pathSegments == split.map { String($0) })
        let tail = path.dropFirst(min(3, path.count))
        let tailSplit: [Substring] = tail.split(separator: "/", omittingEmptySubsequences: false)
        #expect(tail.pathSegments == tailSplit.map { String($0) })
        #expect(path[...].firstPathSegment == split.first.map { String($0) })
        #expect(tail.firstPathSegment == tailSplit.first.map { String($0) })
    }

    @Test func requestIDsAreLowerCaseVersion4UUIDs() {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let id = RequestID.make()
            let bytes = Array(id.utf8)
            #expect(bytes.count == 36)
            #expect([8, 13, 18, 23].allSatisfy { bytes[$0] == UInt8(ascii: "-") }, "\(id)")
            #expect(id.allSatisfy { $0 == "-" || ("0"..."9").contains($0) || ("a"..."f").contains($0) }, "\(id)")
            #expect(bytes[14] == UInt8(ascii: "4") && "89ab".utf8.contains(bytes[19]), "\(id)")
            #expect(UUID(uuidString: id)?.uuidString.lowercased() == id)
            seen.insert(id)
        }
        #expect(seen.count == 1_000)
    }

    /// What the Authorization header's token was before E17: split at the first run of spaces.
    static func splitBearerToken(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1].withoutSurroundingSpaces)
    }

    @Test(arguments: [
        "Bearer tdu_abc", "bearer tdu_abc", "BEARER tdu_abc ", "BeArEr x", "Bearer  tdu_abc", "Bearer", "Bearer ", "Bearer  ",
        " Bearer tdu_abc", "Basic YTpi", "Bearerx tdu_abc", "Bearer\ttdu_abc", "Bearer tdu abc", "Bearer \t", "Bearer é",
        "", " ", "Bearer\u{0} x", "Bearer tdu_abc\t", "Bearer \u{301}x",
    ])
    func bearerTokensReadAsTheSplitDid(authorization: String) {
        #expect(Authenticator.bearerToken(authorization) == Self.splitBearerToken(authorization))
    }
}
