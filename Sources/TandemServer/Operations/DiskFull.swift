import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Writes refused because the disk is full (issue 14 item 12).
///
/// The store reports a full disk, a full quota or a write past the database cap
/// (`--max-database-mib`) as ``StoreError`` `full` (decisions P2); asset and journal files
/// report `ENOSPC` or `EDQUOT`.
/// Either way the failed write was rolled back, reads go on (WAL readers need no new space),
/// and writes succeed again as soon as space is freed: nothing has to be restarted. Clients get
/// `TRY_AGAIN_LATER` (HTTP 503, CloudKit's "service unavailable") with `retryAfter`, never a
/// bare internal error. The server log says so at most once a minute, with the number of
/// writes refused since the last report, so a full disk cannot flood the log.
final class DiskFull: Sendable {
    /// Seconds a client is told to wait before retrying.
    static let retryAfterSeconds = 30
    /// Shortest time between two log reports.
    static let reportInterval: Duration = .seconds(60)

    private let log: RequestLog
    private let state = Locked<(lastReport: ContinuousClock.Instant?, refused: Int)>((nil, 0))

    init(log: RequestLog) { self.log = log }

    /// Whether `error` means there was no space left to write.
    static func matches(_ error: any Error) -> Bool {
        if let error = error as? StoreError { return error.kind == .full }
        if let error = error as? AssetFileError { return error.errno == ENOSPC || error.errno == EDQUOT }
        if let error = error as? HTTPBodyFileError { return error.code == ENOSPC || error.code == EDQUOT }
        return false
    }

    /// The client's error for a write refused by `error`; logs when a minute has passed since the last report.
    func refusal(for error: any Error) -> CloudKitError {
        let now = ContinuousClock.now
        let report: Int? = state.withLock { state in
            state.refused += 1
            if let last = state.lastReport, now - last < Self.reportInterval { return nil }
            defer { state = (now, 0) }
            return state.refused
        }
        if let report {
            log.message("disk full: writes are refused with TRY_AGAIN_LATER until space is freed; reads go on "
                        + "(\(report) refused since the last report; the next report comes a minute later at the earliest): \(error)")
        }
        var refusal = CloudKitError(.tryAgainLater, "the server's disk is full: reads go on, and writes resume once space is freed; retry later")
        refusal.retryAfter = Self.retryAfterSeconds
        return refusal
    }
}
