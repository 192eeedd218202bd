extension AccessPolicy {
    /// What a record is to the share covering it: the policy treats the three differently.
    public enum RecordKind: String, Sendable, CaseIterable {
        /// A record of the share other than its root (every record under a zone-wide share).
        case record
        /// The root record of a hierarchical share (its `share` names the covering share).
        case root
        /// The share record (`cloudkit.share`) itself.
        case share
    }

    /// The action `records/modify` decides for saving (`deleting` false) or deleting a record of
    /// this kind. Saving a share record changes its participants or permissions; deleting it
    /// stops sharing (owner) or leaves (participant, D5); deleting a root is the owner's alone.
    public static func action(for kind: RecordKind, deleting: Bool) -> Action {
        switch (kind, deleting) {
        case (.share, true): .deleteShare
        case (.share, false): .manageParticipants
        case (.root, true): .deleteRoot
        case (.record, true): .delete
        case (.record, false), (.root, false): .write
        }
    }

    /// A participant's standing from their participation: accepted people act with their role
    /// and permission (a public user's is the share's `publicPermission` at the time of asking,
    /// decisions T4); an invitation not accepted yet is `invited`; anything else `removed`.
    public static func principal(status: Share.AcceptanceStatus, role: Share.Role, permission: Share.Permission,
                                 publicPermission: Share.Permission) -> Principal {
        switch status {
        case .accepted: .participant(role, role == .publicUser ? publicPermission : permission)
        case .pending: .invited
        case .removed, .unknown: .removed
        }
    }
}
