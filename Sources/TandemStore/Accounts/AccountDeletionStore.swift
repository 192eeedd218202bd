public import TandemCore

/// A share a person takes part in (invited or accepted), with where its zone lives.
public struct Participation: Sendable, Hashable {
    public var share: StoredShare
    public var participant: StoredParticipant
    public var container: String
    public var environment: Environment

    public init(share: StoredShare, participant: StoredParticipant, container: String, environment: Environment) {
        self.share = share
        self.participant = participant
        self.container = container
        self.environment = environment
    }
}

/// A zone of someone's private database, with its container and environment.
public struct OwnedZone: Sendable, Hashable {
    public var zone: StoredZone
    public var container: String
    public var environment: Environment

    public init(zone: StoredZone, container: String, environment: Environment) {
        self.zone = zone
        self.container = container
        self.environment = environment
    }
}

/// Reads that account deletion and pending invitations need (decisions A15).
public protocol AccountDeletionReading {
    /// The user's participations that are not `REMOVED`, in every container, by zone and share.
    func participations(user: String) throws -> [Participation]
    /// Every zone of the user's private databases, in every container and environment.
    func privateZones(owner: String) throws -> [OwnedZone]
    /// How many records the zone holds.
    func recordCount(zone: StoredZone) throws -> Int
}

/// The last step of deleting an account (decisions A15).
public protocol AccountDeletionWriting: AccountDeletionReading {
    /// Revokes every token of the user, deletes their sign-in methods, consents, emailed links
    /// (theirs and any addressed to their email), asset upload slots and subscriptions, and keeps
    /// the `users` row without email, names or phone, marked deleted (the record name is never
    /// reused; the email can sign up again). Returns how many sessions were working.
    func eraseAccount(user: String, at time: Int64) throws -> Int
}
