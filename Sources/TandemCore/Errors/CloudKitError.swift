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

    public init(_ code: ServerErrorCode, _ reason: String, recordName: String? = nil, zoneID: ZoneID? = nil) {
        self.code = code
        self.reason = reason
        self.recordName = recordName
        self.zoneID = zoneID
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    public static func badRequest(_ reason: String) -> CloudKitError { CloudKitError(.badRequest, reason) }
}
