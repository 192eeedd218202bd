extension Share {
    /// Someone outside a share who asked to join it (CloudKit's `CKShare.AccessRequester`,
    /// decisions D7). The owner and administrators see them in `Share.requesters`.
    ///
    /// The identity carries the user record ID and, for those who manage the share, the email
    /// or phone and name the person's account holds (T6).
    public struct AccessRequester: Sendable, Hashable {
        /// Who asked.
        public var userIdentity: UserIdentity
        /// How to invite them (`CKShare.AccessRequester.participantLookupInfo`): their user record ID.
        public var participantLookupInfo: UserIdentity.LookupInfo? { userIdentity.lookupInfo }
    }

    /// Someone barred from asking to join a share (CloudKit's `CKShare.BlockedIdentity`, D7):
    /// their requests are refused with the same `unknownItem` as for a share that does not
    /// exist (T9), and a public share cannot be joined by them.
    public struct BlockedIdentity: Sendable, Hashable {
        /// Who is blocked.
        public var userIdentity: UserIdentity
    }
}
