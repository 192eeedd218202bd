/// The one error the SDK throws (CloudKit's `CKError`): a `code` named as `CKError.Code`
/// names it, a human message, and the context some codes carry.
///
/// ```swift
/// do { try await database.save(note) }
/// catch let error as TandemError where error.code == .serverRecordChanged {
///     var merged = error.serverRecord!   // the record as the server has it now
///     merged["title"] = note["title"]
///     try await database.save(merged)
/// }
/// ```
///
/// Server errors are mapped from CloudKit Web Services' `serverErrorCode` (see
/// `TandemError.Code.init(serverErrorCode:)`); the original string is kept in `serverErrorCode`.
public struct TandemError: Error, Sendable, CustomStringConvertible {
    /// The codes of `CKError.Code`, same names and meanings.
    public enum Code: Sendable, Hashable, CaseIterable {
        case internalError
        /// Some items of a batch failed; see `partialErrorsByItemID`.
        case partialFailure
        case networkUnavailable
        case networkFailure
        case badContainer
        /// The server is briefly unable to answer (`TRY_AGAIN_LATER`); retry after `retryAfterSeconds`.
        case serviceUnavailable
        /// Too many requests (`THROTTLED`); retry after `retryAfterSeconds`.
        case requestRateLimited
        case missingEntitlement
        /// No valid user: no credentials, or a token the server does not know. Check
        /// `needsSignIn` to include `sessionExpired` and `sessionRevoked`.
        case notAuthenticated
        /// The web auth token's session expired (idle or absolute limit, or it was replaced by a
        /// rotated token over a minute ago): sign in again. The server's `AUTHENTICATION_FAILED`
        /// with `tandemReason` `SESSION_EXPIRED` (decisions A12). Tandem addition.
        case sessionExpired
        /// The session was ended on purpose: signed out, revoked from another device or by the
        /// operator, a password reset, or the account was deleted. `AUTHENTICATION_FAILED` with
        /// `tandemReason` `SESSION_REVOKED` (decisions A12). Tandem addition.
        case sessionRevoked
        /// A first sign-in to this container needs the person's consent: ask them, then call
        /// `Container.signIn` again with `consent: true`. The server's `ACCESS_DENIED` with
        /// `tandemReason` `CONSENT_REQUIRED` (decisions A35). Tandem addition.
        case consentRequired
        case permissionFailure
        case unknownItem
        case invalidArguments
        case resultsTruncated
        /// The record changed on the server since it was fetched; `serverRecord` holds it now.
        case serverRecordChanged
        case serverRejectedRequest
        case assetFileNotFound
        case assetFileModified
        case incompatibleVersion
        case constraintViolation
        case operationCancelled
        case changeTokenExpired
        /// This item was fine, but another item of the same atomic batch failed.
        case batchRequestFailed
        case zoneBusy
        case badDatabase
        case quotaExceeded
        case zoneNotFound
        case limitExceeded
        case userDeletedZone
        case tooManyParticipants
        case alreadyShared
        case referenceViolation
        case managedAccountRestricted
        case participantMayNeedVerification
        case serverResponseLost
        case assetNotAvailable
        case accountTemporarilyUnavailable
        case participantAlreadyInvited
        /// A group session message is over 256 KiB (`MESSAGE_TOO_LARGE`, decisions D32). Tandem addition.
        case messageTooLarge
        /// The conversation already has a session of another activity; activate again with
        /// `replacingExisting: true` to end it (decisions G4). Tandem addition.
        case activityConflict
    }

    /// Identifies the item a per-item error is about.
    public enum ItemID: Sendable, Hashable {
        case record(Record.ID)
        case zone(RecordZone.ID)
        case subscription(String)
        case shareURL(String)
    }

    public var code: Code
    /// A human explanation (the server's `reason` for server errors); for logs, not for matching.
    public var message: String
    /// The server's `serverErrorCode`, when the server sent the error.
    public var serverErrorCode: String?
    /// The HTTP status of the response that carried the error, when there was one.
    public var httpStatus: Int?
    /// On `serverRecordChanged`: the record as the server holds it (CKError.serverRecord).
    public var serverRecord: Record?
    /// On `serviceUnavailable`, `requestRateLimited` and `zoneBusy`: seconds to wait before retrying.
    public var retryAfterSeconds: Double?
    /// On `partialFailure`: the error of each item that failed (CKPartialErrorsByItemIDKey).
    public var partialErrorsByItemID: [ItemID: TandemError]

    public init(_ code: Code, _ message: String, serverErrorCode: String? = nil, httpStatus: Int? = nil,
                serverRecord: Record? = nil, retryAfterSeconds: Double? = nil,
                partialErrorsByItemID: [ItemID: TandemError] = [:]) {
        self.code = code
        self.message = message
        self.serverErrorCode = serverErrorCode
        self.httpStatus = httpStatus
        self.serverRecord = serverRecord
        self.retryAfterSeconds = retryAfterSeconds
        self.partialErrorsByItemID = partialErrorsByItemID
    }

    public var description: String {
        var text = "TandemError.\(code): \(message)"
        if let serverErrorCode { text += " (\(serverErrorCode))" }
        return text
    }

    /// True when the person must sign in again: `notAuthenticated`, `sessionExpired` or
    /// `sessionRevoked` (all three are CloudKit's `notAuthenticated`).
    public var needsSignIn: Bool {
        code == .notAuthenticated || code == .sessionExpired || code == .sessionRevoked
    }

    /// True for the codes worth retrying unchanged after a pause: `serviceUnavailable`,
    /// `requestRateLimited`, `zoneBusy`, `networkFailure`, `networkUnavailable`, `serverResponseLost`.
    public var isRetryable: Bool {
        switch code {
        case .serviceUnavailable, .requestRateLimited, .zoneBusy, .networkFailure, .networkUnavailable, .serverResponseLost: true
        default: false
        }
    }
}

extension TandemError.Code {
    /// Maps a CloudKit Web Services `serverErrorCode` (and Tandem's additions) to a `CKError.Code`.
    ///
    /// | serverErrorCode | Code |
    /// |---|---|
    /// | `ACCESS_DENIED` | `permissionFailure` |
    /// | `ATOMIC_ERROR` | `batchRequestFailed` |
    /// | `AUTHENTICATION_FAILED`, `AUTHENTICATION_REQUIRED` | `notAuthenticated` |
    /// | `AUTHENTICATION_FAILED` with `tandemReason` `SESSION_EXPIRED` / `SESSION_REVOKED` | `sessionExpired` / `sessionRevoked` (`init(serverErrorCode:tandemReason:)`) |
    /// | `ACCESS_DENIED` with `tandemReason` `CONSENT_REQUIRED` | `consentRequired` (`init(serverErrorCode:tandemReason:)`) |
    /// | `BAD_REQUEST` | `invalidArguments` |
    /// | `CONFLICT`, `EXISTS` | `serverRecordChanged` |
    /// | `INTERNAL_ERROR` | `internalError` |
    /// | `NOT_FOUND` | `unknownItem` |
    /// | `QUOTA_EXCEEDED` | `quotaExceeded` |
    /// | `THROTTLED` | `requestRateLimited` |
    /// | `TRY_AGAIN_LATER` | `serviceUnavailable` |
    /// | `VALIDATING_REFERENCE_ERROR` | `referenceViolation` |
    /// | `ZONE_NOT_FOUND` | `zoneNotFound` |
    /// | `CHANGE_TOKEN_EXPIRED` | `changeTokenExpired` |
    /// | `ALREADY_SHARED` | `alreadyShared` |
    /// | `TOO_MANY_PARTICIPANTS` | `tooManyParticipants` |
    /// | `PARTICIPANT_ALREADY_INVITED` | `participantAlreadyInvited` |
    /// | `LIMIT_EXCEEDED` | `limitExceeded` |
    /// | `MESSAGE_TOO_LARGE` | `messageTooLarge` |
    /// | anything else | `serverRejectedRequest` |
    public init(serverErrorCode: String) {
        self = switch serverErrorCode {
        case "ACCESS_DENIED": .permissionFailure
        case "ATOMIC_ERROR": .batchRequestFailed
        case "AUTHENTICATION_FAILED", "AUTHENTICATION_REQUIRED": .notAuthenticated
        case "BAD_REQUEST": .invalidArguments
        case "CONFLICT", "EXISTS": .serverRecordChanged
        case "INTERNAL_ERROR": .internalError
        case "NOT_FOUND": .unknownItem
        case "QUOTA_EXCEEDED": .quotaExceeded
        case "THROTTLED": .requestRateLimited
        case "TRY_AGAIN_LATER": .serviceUnavailable
        case "VALIDATING_REFERENCE_ERROR": .referenceViolation
        case "ZONE_NOT_FOUND": .zoneNotFound
        case "CHANGE_TOKEN_EXPIRED": .changeTokenExpired
        case "ALREADY_SHARED": .alreadyShared
        case "TOO_MANY_PARTICIPANTS": .tooManyParticipants
        case "PARTICIPANT_ALREADY_INVITED": .participantAlreadyInvited
        case "LIMIT_EXCEEDED": .limitExceeded
        case "MESSAGE_TOO_LARGE": .messageTooLarge
        default: .serverRejectedRequest
        }
    }

    /// As `init(serverErrorCode:)`, refined by the error body's `tandemReason` (decisions A12):
    /// `AUTHENTICATION_FAILED` with `SESSION_EXPIRED` is `sessionExpired`, with `SESSION_REVOKED`
    /// `sessionRevoked`; `ACCESS_DENIED` with `CONSENT_REQUIRED` is `consentRequired` (A35); any
    /// other combination is the plain mapping.
    public init(serverErrorCode: String, tandemReason: String?) {
        switch (serverErrorCode, tandemReason) {
        case ("AUTHENTICATION_FAILED", "SESSION_EXPIRED"?): self = .sessionExpired
        case ("AUTHENTICATION_FAILED", "SESSION_REVOKED"?): self = .sessionRevoked
        case ("ACCESS_DENIED", "CONSENT_REQUIRED"?): self = .consentRequired
        default: self.init(serverErrorCode: serverErrorCode)
        }
    }
}
