import TandemCore
import TandemStore

/// The allowed sharing options in force (`CKAllowedSharingOptions`; decisions R15–R17): the
/// operator's policy for the container, narrowed by the share's own. Every step that grants
/// access — a share save, *Collaborate*, a membership prompt, approving a requester — asks here,
/// inside its own transaction, so a refusal writes nothing.
enum SharingOptionsPolicy {
    /// The options in force for `share` of `container`.
    /// - Throws: `BAD_REQUEST` when the share's own options and the container's have nothing in
    ///   common (the operator narrowed the container after the share was saved).
    static func effective(_ reader: any StoreReading, share: StoredShare, container: String) throws -> AllowedSharingOptions {
        try narrowed(reader, container: container, by: try reader.allowedSharingOptions(share: share))
    }

    /// Checks a share save after its changes were applied: what it grants must be within the
    /// options in force, and options it sets must fit the container's. `before` is the share
    /// as stored before the save (nil for a new one), `participantsBefore` its participants.
    /// A save that sets options is checked whole (public permission and every active
    /// participant); otherwise only what it changes, so narrowing a policy never makes an
    /// existing share unsavable (R17).
    static func checkSave(_ tx: any StoreWriting, share: StoredShare, before: StoredShare?, participantsBefore: [StoredParticipant],
                          requested: AllowedSharingOptions?, container: String) throws {
        let options: AllowedSharingOptions
        if let requested {
            options = try narrowed(tx, container: container, by: requested)
            try tx.setAllowedSharingOptions(requested, share: share)
        } else {
            options = try effective(tx, share: share, container: container)
        }
        let whole = requested != nil || before == nil
        if whole || before?.publicPermission != share.publicPermission {
            try options.enforcePublic(share.publicPermission)
        }
        let earlier = Dictionary(participantsBefore.map { ($0.participantID, $0) }, uniquingKeysWith: { a, _ in a })
        for participant in try tx.participants(share: share) where participant.status != .removed {
            let old = earlier[participant.participantID]
            guard whole || old == nil || old?.status == .removed || old?.permission != participant.permission else { continue }
            try options.enforceParticipant(participant.permission, who: "participant '\(name(participant))'")
        }
    }

    /// Checks one grant outside a share save (*Collaborate*, a membership prompt, an approval).
    static func checkGrant(_ reader: any StoreReading, share: StoredShare, container: String, permission: Share.Permission,
                           who: String) throws {
        try effective(reader, share: share, container: container).enforceParticipant(permission, who: who)
    }

    private static func narrowed(_ reader: any StoreReading, container: String, by options: AllowedSharingOptions) throws -> AllowedSharingOptions {
        let policy = try reader.allowedSharingOptions(container: container) ?? .standard
        guard let both = policy.narrowed(by: options) else {
            throw CloudKitError.badRequest("""
                outside the allowed sharing options: the share's (\(options.permission.rawValue), \(options.access.rawValue)) \
                and the container's (\(policy.permission.rawValue), \(policy.access.rawValue)) have nothing in common
                """)
        }
        return both
    }

    private static func name(_ participant: StoredParticipant) -> String {
        participant.userRecordName ?? participant.email ?? participant.phone ?? participant.participantID
    }
}
