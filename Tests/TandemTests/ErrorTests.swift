import Foundation
import Testing
import Tandem

@Suite("Errors and retries")
struct ErrorTests {
    static let table: [(String, TandemError.Code)] = [
        ("ACCESS_DENIED", .permissionFailure), ("ATOMIC_ERROR", .batchRequestFailed),
        ("AUTHENTICATION_FAILED", .notAuthenticated), ("AUTHENTICATION_REQUIRED", .notAuthenticated),
        ("BAD_REQUEST", .invalidArguments), ("CONFLICT", .serverRecordChanged), ("EXISTS", .serverRecordChanged),
        ("INTERNAL_ERROR", .internalError), ("NOT_FOUND", .unknownItem), ("QUOTA_EXCEEDED", .quotaExceeded),
        ("THROTTLED", .requestRateLimited), ("TRY_AGAIN_LATER", .serviceUnavailable),
        ("VALIDATING_REFERENCE_ERROR", .referenceViolation), ("ZONE_NOT_FOUND", .zoneNotFound),
        ("CHANGE_TOKEN_EXPIRED", .changeTokenExpired), ("ALREADY_SHARED", .alreadyShared),
        ("TOO_MANY_PARTICIPANTS", .tooManyParticipants), ("PARTICIPANT_ALREADY_INVITED", .participantAlreadyInvited),
        ("LIMIT_EXCEEDED", .limitExceeded), ("SOMETHING_NEW", .serverRejectedRequest),
    ]

    @Test(arguments: table)
    func serverErrorCodeMapsToCloudKitCode(serverErrorCode: String, code: TandemError.Code) {
        #expect(TandemError.Code(serverErrorCode: serverErrorCode) == code)
    }

    @Test func onlyPassingFailuresAreRetryable() {
        let retryable: Set<TandemError.Code> = [.serviceUnavailable, .requestRateLimited, .zoneBusy, .networkFailure,
                                                .networkUnavailable, .serverResponseLost]
        for code in TandemError.Code.allCases {
            #expect(TandemError(code, "").isRetryable == retryable.contains(code), "\(code)")
        }
    }

    @Test func backoffDoublesUpToTheCapAndHonoursRetryAfter() {
        let policy = RetryPolicy(maximumAttempts: 6, initialDelay: 0.5, multiplier: 2, maximumDelay: 3)
        let plain = TandemError(.networkFailure, "")
        #expect((0..<5).map { policy.delay(beforeRetry: $0, after: plain) } == [0.5, 1, 2, 3, 3])
        #expect(policy.delay(beforeRetry: 0, after: TandemError(.requestRateLimited, "", retryAfterSeconds: 2)) == 2)
        #expect(policy.delay(beforeRetry: 0, after: TandemError(.requestRateLimited, "", retryAfterSeconds: 60)) == 3)
    }

    @Test func badTokenIsNotAuthenticated() async throws {
        let container = TestServer.shared.container(token: "not-a-token")
        let error = await #expect(throws: TandemError.self) { try await container.userRecordID() }
        #expect(error?.code == .notAuthenticated)
        #expect(error?.serverErrorCode != nil)
    }

    @Test func unreachableServerIsANetworkErrorAfterRetries() async throws {
        let container = Container(identifier: TestServer.container, serverURL: URL(string: "http://127.0.0.1:1")!,
                                  credentials: .userToken("t"),
                                  configuration: Container.Configuration(retryPolicy: RetryPolicy(maximumAttempts: 2, initialDelay: 0.01)))
        let error = await #expect(throws: TandemError.self) { try await container.userRecordID() }
        #expect(error?.code == .networkUnavailable || error?.code == .networkFailure)
    }

    @Test func expiredOrForgedChangeTokenIsReported() async throws {
        let db = TestServer.shared.ada.privateDatabase
        let forged = try JSONDecoder().decode(ServerChangeToken.self, from: Data(#""AAAA""#.utf8))
        let error = await #expect(throws: TandemError.self) { try await db.databaseChanges(since: forged) }
        #expect(error?.code == .invalidArguments || error?.code == .changeTokenExpired)
    }
}
