/// Whether a container's credentials reach a user (CloudKit's `CKAccountStatus`, same cases).
/// Answered by `Container.accountStatus()`; decisions A34.
public enum AccountStatus: Sendable, Hashable, CaseIterable {
    /// The server answered in a way none of the other cases covers (e.g. `INTERNAL_ERROR`).
    case couldNotDetermine
    /// The credentials reach `users/current`: requests are made as a user.
    case available
    /// The server knows the user but refuses them this container (`ACCESS_DENIED` on
    /// `users/current`). Tandem has no parental or device-management restrictions, so this is rare.
    case restricted
    /// No user: no credentials (or an API token without a web auth token), or the server refused
    /// the session as expired, revoked or unknown (`AUTHENTICATION_FAILED`/`AUTHENTICATION_REQUIRED`).
    case noAccount
    /// The server could not be reached (connection refused, timed out, DNS) or answered 503
    /// (`TRY_AGAIN_LATER`, or a 5xx without an error body from a proxy in front of it).
    case temporarilyUnavailable

    /// The status a failed `users/current` request means (decisions A34):
    ///
    /// | Error code | Status |
    /// |---|---|
    /// | `notAuthenticated`, `sessionExpired`, `sessionRevoked` | `noAccount` |
    /// | `networkUnavailable`, `networkFailure`, `serviceUnavailable` | `temporarilyUnavailable` |
    /// | `permissionFailure`, `managedAccountRestricted` | `restricted` |
    /// | anything else | `couldNotDetermine` |
    public init(failure: TandemError) {
        self = switch failure.code {
        case .notAuthenticated, .sessionExpired, .sessionRevoked: .noAccount
        case .networkUnavailable, .networkFailure, .serviceUnavailable: .temporarilyUnavailable
        case .permissionFailure, .managedAccountRestricted: .restricted
        default: .couldNotDetermine
        }
    }
}
