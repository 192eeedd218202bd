import TandemCore
import TandemHTTP
import TandemCrypto

/// Outstanding WebAuthn challenges (decision A27): 32 random bytes each, single use, valid for
/// 5 minutes, bound to what asked for it — the browser session (the sign-in page's CSRF cookie)
/// or the app (the JSON API's container) — and to its step (create or get). A sign-up's
/// challenge also carries the email and name it was asked for, so the finished registration
/// cannot swap them.
///
/// In memory, per process, at most 10,000 at once (expired ones are dropped first, then the
/// oldest) and 30 outstanding per client address (more is `THROTTLED`, so one address cannot
/// push everyone else's out): a restart forgets them (a person starts again), and several nodes would each hold
/// their own (as the rate limits, A5).
final class PasskeyChallenges: Sendable {
    enum Purpose: String, Sendable {
        /// `navigator.credentials.create`: a sign-up with a passkey.
        case create
        /// `navigator.credentials.get`: a sign-in.
        case get
    }

    struct Issued: Sendable {
        var challenge: [UInt8]
        var purpose: Purpose
        /// `page:` + the CSRF token of the browser session, or `api:` for the JSON API.
        var binding: String
        var container: String
        var relyingParty: PasskeyRelyingParty
        var expiresAt: Int64
        /// A sign-up's email (normalised) and display name.
        var email: String?
        var displayName: String?
        /// The client address that asked, as limits count it (`IPAddress.limitKey`: IPv6 by its /64).
        var address: String
    }

    static let lifetimeMilliseconds: Int64 = 5 * 60 * 1000
    static let capacity = 10_000
    static let perAddress = 30
    private let table = Locked<[[UInt8]: Issued]>([:])

    /// A new challenge for `purpose`, valid until `now` + 5 minutes.
    /// - Throws: `THROTTLED` when `address` holds 30 unexpired challenges.
    func issue(purpose: Purpose, binding: String, container: String, relyingParty: PasskeyRelyingParty, email: String? = nil,
               displayName: String? = nil, address: String, at now: Int64) throws -> Issued {
        let issued = Issued(challenge: Digest.randomBytes(32), purpose: purpose, binding: binding, container: container,
                            relyingParty: relyingParty, expiresAt: now + Self.lifetimeMilliseconds, email: email, displayName: displayName,
                            address: IPAddress.limitKey(address))
        let key = issued.address
        let full: Bool = table.withLock { table in
            if table.values.lazy.filter({ $0.address == key && $0.expiresAt > now }).count >= Self.perAddress { return true }
            if table.count >= Self.capacity {
                table = table.filter { $0.value.expiresAt > now }
                if table.count >= Self.capacity, let oldest = table.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
                    table.removeValue(forKey: oldest.key)
                }
            }
            table[issued.challenge] = issued
            return false
        }
        if full {
            var error = CloudKitError(.throttled, "too many passkey challenges from this address; finish or wait for one (they last 5 minutes)")
            error.retryAfter = Int(Self.lifetimeMilliseconds / 1000)
            throw error
        }
        return issued
    }

    /// Consumes `challenge` (whatever the outcome, it cannot be used again) and returns it when it
    /// was issued for `purpose`, `binding` and `container` and has not expired at `now`.
    /// - Throws: `.challengeUnknown` (never issued, or used), `.challengeExpired`, `.challengeMismatch`.
    func take(_ challenge: [UInt8], purpose: Purpose, binding: String, container: String, at now: Int64) throws(WebAuthnError) -> Issued {
        guard let issued = table.withLock({ $0.removeValue(forKey: challenge) }) else { throw .challengeUnknown }
        guard issued.expiresAt > now else { throw .challengeExpired }
        guard issued.purpose == purpose, issued.container == container, Digest.equal(Array(issued.binding.utf8), Array(binding.utf8)) else {
            throw .challengeMismatch
        }
        return issued
    }
}
