/// An error a client sees: a `serverErrorCode`, a human `reason`, and for per-item errors the
/// item it is about. Rendered as CloudKit's error dictionary (`uuid`, `serverErrorCode`,
/// `reason`, optional `retryAfter`, `redirectURL`, `recordName`, `zoneID`, and Tandem's
/// `serverRecord` on `CONFLICT`, decisions D2).
public struct CloudKitError: Error, Sendable, CustomStringConvertible {
    public var code: ServerErrorCode
    public var reason: String
    public var recordName: String?
    public var zoneID: ZoneID?
    /// Seconds a client should wait before retrying; nil means do not retry.
    public var retryAfter: Int?
    public var redirectURL: String?
    /// The current server record, on `CONFLICT` and `EXISTS` (decisions D2).
    public var serverRecord: Record?
    /// Tandem's stable sub-code of an answer whose `serverErrorCode` is CloudKit's and whose
    /// `reason` is for people: on `AUTHENTICATION_FAILED`, `SESSION_EXPIRED` (idle or absolute
    /// limit, or replaced by a rotated token) or `SESSION_REVOKED` (signed out, revoked, account
    /// deleted), decisions A12; on `ACCESS_DENIED` from a first sign-in without consent,
    /// `CONSENT_REQUIRED` (A35). Rendered as `tandemReason`; nil otherwise.
    public var tandemReason: String?

    public init(_ code: ServerErrorCode, _ reason: String, recordName: String? = nil, zoneID: ZoneID? = nil) {
        self.code = code
        self.reason = reason
        self.recordName = recordName
        self.zoneID = zoneID
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    public static func badRequest(_ reason: String) -> CloudKitError { CloudKitError(.badRequest, reason) }
}
