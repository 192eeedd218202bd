import TandemCore
import TandemStore

extension AccountService {
    /// How recent a sign-in must be to delete an account that has no password (decisions A15).
    static let freshSignInMilliseconds: Int64 = 10 * 60 * 1000

    /// Self-service deletion (`POST /auth/1/{container}/account/delete`, the page
    /// `/signin/account/delete`): the person proves it is them again, then `deletion` runs.
    /// An account with a password must send it (checked with the sign-in rate limits, A5); one
    /// without must present a token of a session signed in within the last 10 minutes.
    /// - Throws: `BAD_REQUEST` without a password when the account has one, `ACCESS_DENIED` for a
    ///   wrong password or a sign-in that is not fresh, `THROTTLED` after too many wrong passwords.
    func deleteAccount(user: String, presentedToken: String, password: String?, address: String,
                       deletion: AccountDeletion) throws -> AccountDeletion.Report {
        let now = Clock.milliseconds()
        let (profile, methods, signedIn) = try store.read { reader in
            (try reader.profile(user: user), try reader.signInMethods(user: user), try reader.signedInAt(tokenHash: Tokens.hash(presentedToken)))
        }
        guard let profile else { throw CloudKitError(.notFound, "the account no longer exists") }
        if methods.contains(where: { $0.kind == PasswordSignIn.kind }) {
            guard let password, !password.isEmpty else {
                throw CloudKitError.badRequest("enter your current password to delete your account: send 'password'")
            }
            try confirmPassword(password, profile: profile, address: address, at: now)
        } else {
            // The sign-in, not the token: rotation (A13) issues new tokens of the same session.
            guard now - (signedIn ?? 0) <= Self.freshSignInMilliseconds else {
                throw CloudKitError(.accessDenied, "sign in again, then delete the account within 10 minutes")
            }
        }
        let report = try deletion.delete(user: user)
        authenticator.revoked()
        return report
    }

    /// Checks `password` for the signed-in account, counting a wrong one as a failed sign-in.
    func confirmPassword(_ password: String, profile: AccountProfile, address: String, at now: Int64) throws {
        let key = profile.email ?? profile.recordName
        try limiter.admitSignIn(account: key, address: address, at: now)
        let proven: UserAccount?
        do {
            proven = try profile.email.flatMap { try self.password.authenticate(["email": $0, "password": password]) }
        } catch {
            limiter.uncounted(account: key, address: address, at: now)
            throw error
        }
        guard let proven, proven.recordName == profile.recordName else { throw CloudKitError(.accessDenied, "the password is wrong") }
        limiter.succeeded(account: key, address: address, at: now)
    }
}
