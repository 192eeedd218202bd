import Testing
import TandemCore

/// `serverErrorCode` strings and the HTTP status of each (cloudkit.md §1.8; Tandem's additions,
/// decisions D9 and D13).
@Suite struct ServerErrorCodeTests {
    static let table: [(wire: String, status: Int)] = [
        ("ACCESS_DENIED", 403), ("ATOMIC_ERROR", 400), ("AUTHENTICATION_FAILED", 401), ("AUTHENTICATION_REQUIRED", 421),
        ("BAD_REQUEST", 400), ("CONFLICT", 409), ("EXISTS", 409), ("INTERNAL_ERROR", 500), ("NOT_FOUND", 404),
        ("QUOTA_EXCEEDED", 413), ("THROTTLED", 429), ("TRY_AGAIN_LATER", 503), ("VALIDATING_REFERENCE_ERROR", 412),
        ("ZONE_NOT_FOUND", 404), ("CHANGE_TOKEN_EXPIRED", 410),
        // Tandem additions (D13); their statuses are published in /openapi.json from this table.
        ("ALREADY_SHARED", 409), ("TOO_MANY_PARTICIPANTS", 413), ("PARTICIPANT_ALREADY_INVITED", 409), ("LIMIT_EXCEEDED", 413),
        ("MESSAGE_TOO_LARGE", 413),
    ]

    @Test(arguments: table)
    func codeHasItsHTTPStatus(_ entry: (wire: String, status: Int)) {
        let code = ServerErrorCode(rawValue: entry.wire)
        #expect(code != nil, "no case spells \(entry.wire)")
        #expect(code?.httpStatus == entry.status)
        #expect(code?.rawValue == entry.wire)
    }

    @Test func everyCodeIsInTheTable() {
        #expect(Set(ServerErrorCode.allCases.map(\.rawValue)) == Set(Self.table.map(\.wire)))
        #expect(ServerErrorCode.allCases.count == Self.table.count)
    }

    @Test func statusesAreClientOrServerErrors() {
        for code in ServerErrorCode.allCases {
            #expect((400..<600).contains(code.httpStatus), "\(code)")
        }
    }

    @Test(arguments: ["bad_request", "BADREQUEST", "NOT FOUND", ""])
    func wireStringsAreExact(_ text: String) {
        #expect(ServerErrorCode(rawValue: text) == nil)
    }
}
