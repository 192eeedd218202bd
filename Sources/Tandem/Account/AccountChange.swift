/// A change of who a container is signed in as (the role of CloudKit's `CKAccountChanged`
/// notification, with the cases `CKSyncEngine`'s account-change event names). Delivered by
/// `Container.accountChanges`; decisions A36.
public enum AccountChange: Sendable, Hashable {
    /// Someone signed in where no one was (or the previous session had ended): `Container.signIn`,
    /// or `replaceCredentials` once `users/current` named the new user.
    case signedIn(Record.ID)
    /// The credentials now name another person than before (`signIn` or `replaceCredentials`
    /// with another user's token; found by `users/current` when the container cannot tell).
    case switched(from: Record.ID, to: Record.ID)
    /// `Container.signOut()`, or `replaceCredentials` with credentials that name no user.
    case signedOut
    /// A request found the session over: the server answered `sessionExpired` or
    /// `sessionRevoked` (decisions A12). The container keeps its credentials; sign in again.
    case sessionEnded(reason: SessionEndReason)

    /// Why the server ended a session.
    public enum SessionEndReason: Sendable, Hashable {
        /// Idle or absolute limit reached, or replaced by a rotated token over a minute ago.
        case expired
        /// Signed out or revoked elsewhere, a password reset, or the account was deleted.
        case revoked
    }
}
