import TandemCore
import TandemStore

/// Why an emailed sign-up or reset link cannot be followed (decisions A11, A46). The person
/// holds the link's secret, so telling them which case it is gives nothing away and tells them
/// what to do: ask for a new link, or sign in.
enum AccountLinkRefusal: Equatable {
    /// No link with this secret and purpose (mistyped, or from another server).
    case unknown
    /// Followed already, or a newer link to the same address was (one link per address works).
    case used
    /// Older than the link lifetime (`tandem serve --link-lifetime`, default 24 hours).
    case expired

    /// The refusal for `link` (looked up by its secret's hash) when followed for `purpose` at `now`
    /// (milliseconds since 1970); nil when it may be followed.
    static func of(_ link: AccountLink?, purpose: AccountLink.Purpose, now: Int64) -> AccountLinkRefusal? {
        guard let link, link.purpose == purpose else { return .unknown }
        if link.usedAt != nil { return .used }
        if link.expiresAt <= now { return .expired }
        return nil
    }

    /// The person's next step for a link of `purpose`.
    func reason(_ purpose: AccountLink.Purpose) -> String {
        let again = purpose == .reset ? "ask for a new password reset link" : "sign up again, or sign in if the account was created"
        switch self {
        case .unknown: return "this link is unknown (check that it was copied whole); \(again)"
        case .used: return "this link was used already (or a newer one sent to the same address was); \(again)"
        case .expired: return "this link expired; \(again)"
        }
    }

    /// The JSON API's answer: `AUTHENTICATION_FAILED` with the reason and a `tandemReason`
    /// (`LINK_EXPIRED`, `LINK_USED`; none for an unknown link) to switch on.
    func error(_ purpose: AccountLink.Purpose) -> CloudKitError {
        var error = CloudKitError(.authenticationFailed, reason(purpose))
        switch self {
        case .unknown: break
        case .used: error.tandemReason = "LINK_USED"
        case .expired: error.tandemReason = "LINK_EXPIRED"
        }
        return error
    }

    /// The page's status: 410 Gone for a link that worked once (used or expired), 403 for an
    /// unknown one (as a refused form).
    var pageStatus: Int { self == .unknown ? 403 : 410 }

    /// The page status for an error the JSON path threw (`error(_:)`), else `fallback`.
    static func pageStatus(_ error: CloudKitError, fallback: Int) -> Int {
        error.tandemReason == "LINK_USED" || error.tandemReason == "LINK_EXPIRED" ? 410 : fallback
    }
}
