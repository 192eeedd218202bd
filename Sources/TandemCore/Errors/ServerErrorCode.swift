/// The `serverErrorCode` strings of CloudKit Web Services, with the HTTP status each carries.
///
/// Source: CloudKit Web Services Reference, "Error Codes" (2016-06-13); the last six are
/// Tandem's additions (decisions D9, D13).
public enum ServerErrorCode: String, Sendable, CaseIterable {
    case accessDenied = "ACCESS_DENIED"
    case atomicError = "ATOMIC_ERROR"
    case authenticationFailed = "AUTHENTICATION_FAILED"
    case authenticationRequired = "AUTHENTICATION_REQUIRED"
    case badRequest = "BAD_REQUEST"
    case conflict = "CONFLICT"
    case exists = "EXISTS"
    case internalError = "INTERNAL_ERROR"
    case notFound = "NOT_FOUND"
    case quotaExceeded = "QUOTA_EXCEEDED"
    case throttled = "THROTTLED"
    case tryAgainLater = "TRY_AGAIN_LATER"
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    case zoneNotFound = "ZONE_NOT_FOUND"
    case changeTokenExpired = "CHANGE_TOKEN_EXPIRED"
    case alreadyShared = "ALREADY_SHARED"
    case tooManyParticipants = "TOO_MANY_PARTICIPANTS"
    case participantAlreadyInvited = "PARTICIPANT_ALREADY_INVITED"
    case limitExceeded = "LIMIT_EXCEEDED"
    /// A group session message over 256 KiB (decisions D32).
    case messageTooLarge = "MESSAGE_TOO_LARGE"

    /// The HTTP status of a whole-request error with this code.
    public var httpStatus: Int {
        switch self {
        case .accessDenied: 403
        case .atomicError, .badRequest: 400
        case .authenticationFailed: 401
        case .authenticationRequired: 421
        case .conflict, .exists, .alreadyShared, .participantAlreadyInvited: 409
        case .internalError: 500
        case .notFound, .zoneNotFound: 404
        case .quotaExceeded, .limitExceeded, .tooManyParticipants, .messageTooLarge: 413
        case .throttled: 429
        case .tryAgainLater: 503
        case .validatingReferenceError: 412
        case .changeTokenExpired: 410
        }
    }
}
