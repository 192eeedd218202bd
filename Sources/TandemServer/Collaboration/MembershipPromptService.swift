import Foundation
public import TandemCore
public import TandemStore

/// Membership prompts (spec §1.7 step 7): the owner accepts or declines. Accepting adds or
/// removes the person as a participant of each Tandem share named (invited `READ_WRITE`,
/// decisions W7) and posts the membership notice; custom collaborations come back as
/// participants updates for the owner's app (`SWUpdateCollaborationParticipantsAction`).
public final class MembershipPromptService: Sendable {
    let store: any Store
    let hub: ConversationHub
    /// Told of the share records an accepted prompt changed, so subscribers and removed people hear of it.
    let changeHub: ChangeHub?
    let participantLimit: Int

    init(store: any Store, hub: ConversationHub, changeHub: ChangeHub? = nil, participantLimit: Int) {
        self.store = store
        self.hub = hub
        self.changeHub = changeHub
        self.participantLimit = participantLimit
    }

    /// A custom collaboration's change for the owner's app: add or remove `person`; for a
    /// removal, the root hash issued to them (nil when none was).
    public struct ParticipantsUpdate: Sendable, Hashable {
        public var collaborationIdentifier: String
        public var person: String
        public var added: Bool
        public var removedRootHash: [UInt8]?
    }

    /// The owner's prompts, oldest first (`pending` only unless `all`).
    public func prompts(owner: String, container: String, environment: Environment, all: Bool) throws -> [JSONValue] {
        try store.read { reader in
            try reader.prompts(owner: owner, container: container, environment: environment, state: all ? nil : .pending)
                .map { try CollaborationCodec.prompt($0, reader) }
        }
    }

    /// Accepts or declines a pending prompt of the caller. Returns the prompt as it is now and
    /// the participants updates the owner's app must run for custom collaborations. Accepting
    /// applies only what still holds (W16): nothing when the person has since left (for an add)
    /// or come back (for a removal), and no share whose URL no longer counts in the conversation.
    /// - Throws: `NOT_FOUND` for a prompt that is not the caller's; `CONFLICT` for one already
    ///   answered; `TOO_MANY_PARTICIPANTS` when a share is full (nothing is applied then).
    public func respond(prompt id: String, owner: String, accept: Bool) throws -> (prompt: JSONValue, updates: [ParticipantsUpdate]) {
        let now = Clock.milliseconds()
        let hub = self.hub, changeHub = self.changeHub
        let limit = participantLimit
        let result = try store.write({ tx -> (JSONValue, [ParticipantsUpdate], ConversationHub.Effects, [ChangeEvent]) in
            guard var prompt = try tx.prompt(id: id), prompt.owner == owner else { throw CloudKitError(.notFound, "no prompt '\(id)' of yours") }
            guard prompt.state == .pending else { throw CloudKitError(.conflict, "this prompt was already \(prompt.state.rawValue)") }
            prompt.state = accept ? .accepted : .declined
            try tx.putPrompt(prompt)
            var effects = ConversationHub.Effects(container: prompt.container, environment: prompt.environment)
            var updates: [ParticipantsUpdate] = []
            var events: [ChangeEvent] = []
            // What held when the prompt was made is asked again (W16): a person who left (or
            // came back) since, a share whose URL no longer counts there, applies nothing.
            let members = try tx.conversation(id: prompt.conversationID)?.members ?? []
            let stillHolds = prompt.change == .add ? members.contains(prompt.person) : !members.contains(prompt.person)
            if accept && stillHolds {
                var changes: [ShareMembershipNotices.Change] = []
                for identifier in prompt.collaborations {
                    guard let collaboration = try tx.collaboration(id: identifier, container: prompt.container, environment: prompt.environment),
                          collaboration.owner == owner, try MembershipSync.counts(tx, collaboration, in: prompt.conversationID) else { continue }
                    switch collaboration.kind {
                    case .share:
                        guard let guid = collaboration.shareGUID,
                              let share = try tx.share(shortGUID: guid, container: prompt.container, environment: prompt.environment) else { continue }
                        // The share's people change, so which conversations it reaches (W19).
                        let before = try ShareReach.viewers(tx, shortGUID: guid, container: prompt.container, environment: prompt.environment)
                        if let event = try Self.apply(tx, share: share, person: prompt.person, add: prompt.change == .add, owner: owner,
                                                      limit: limit, container: prompt.container, environment: prompt.environment, at: now) {
                            changes.append(.init(share: share, user: prompt.person, added: prompt.change == .add))
                            events.append(event)
                            effects.highlightViewers.formUnion(before)
                            effects.highlightViewers.formUnion(try ShareReach.viewers(tx, shortGUID: guid, container: prompt.container,
                                                                                      environment: prompt.environment))
                        }
                    case .custom:
                        var update = ParticipantsUpdate(collaborationIdentifier: identifier, person: prompt.person, added: prompt.change == .add)
                        if prompt.change == .remove {
                            update.removedRootHash = try tx.identities(container: prompt.container, environment: prompt.environment.rawValue,
                                                                       collaboration: identifier)
                                .last { $0.userRecordName == prompt.person && $0.state != .removed }?.rootHash
                        }
                        updates.append(update)
                    }
                }
                let posted = try ShareMembershipNotices.post(tx, changes, actor: owner, container: prompt.container,
                                                            environment: prompt.environment, at: now)
                effects.envelopes += posted.envelopes
            }
            return (try CollaborationCodec.prompt(prompt, tx), updates, effects, events)
        }, afterCommit: { result in
            hub.publish(result.2)
            for event in result.3 { changeHub?.publish(event) }
        })
        return (result.0, result.1)
    }

    /// Adds `person` to the share (invited, READ_WRITE) or removes them; returns the change to
    /// publish. Nil when nothing changed (already in, already out, or a public share, whose
    /// people join by URL).
    static func apply(_ tx: any StoreWriting, share: StoredShare, person: String, add: Bool, owner: String, limit: Int,
                      container: String, environment: Environment, at now: Int64) throws -> ChangeEvent? {
        if add {
            // Messages' "can make changes" (W9), unless the share allows read-only only (R17).
            let permission = try SharingOptionsPolicy.effective(tx, share: share, container: container).defaultParticipantPermission
            guard try invite(tx, share: share, person: person, permission: permission, container: container, limit: limit, at: now) else {
                return nil
            }
        } else {
            guard person != share.owner,
                  var removing = try tx.participants(share: share).first(where: { $0.userRecordName == person && $0.status != .removed })
            else { return nil }
            removing.status = .removed
            try tx.putParticipant(removing, share: share)
        }
        return try ShareRecords.participantsChanged(tx, share: share, by: owner, container: container, environment: environment, at: now)
    }

    /// Writes `person` as an invited (`INVITED`) participant of the share with `permission`;
    /// false when nothing was written: the owner, someone already in (invited or accepted), or a
    /// public share, whose people join by URL. The caller publishes the change (W9, R1).
    /// - Throws: `TOO_MANY_PARTICIPANTS` when the share is full; `BAD_REQUEST` when the share's
    ///   allowed sharing options do not allow `permission` (R17).
    static func invite(_ tx: any StoreWriting, share: StoredShare, person: String, permission: Share.Permission, container: String,
                       limit: Int, at now: Int64) throws -> Bool {
        guard person != share.owner, share.publicPermission == .none else { return false }
        let participants = try tx.participants(share: share)
        guard !participants.contains(where: { $0.userRecordName == person && $0.status != .removed }) else { return false }
        try SharingOptionsPolicy.checkGrant(tx, share: share, container: container, permission: permission, who: "an invitee")
        let active = participants.filter { $0.status != .removed }.count + 1
        guard active < limit else { throw CloudKitError(.tooManyParticipants, "a share may have at most \(limit) participants, the owner included") }
        let account = try tx.user(matching: UserIdentity(userRecordName: person))
        let previous = participants.first { $0.userRecordName == person }
        try tx.putParticipant(StoredParticipant(participantID: previous?.participantID ?? ShareTokens.makeParticipantID(), userRecordName: person,
                                                email: account?.email, phone: account?.phoneNumber, role: .privateUser,
                                                permission: permission, status: .pending, isApprovedRequester: false, addedAt: now),
                              share: share)
        // Inviting someone lifts a block on them: the owner chose them (W23).
        try tx.setBlocked(person, blocked: false, share: share, at: now)
        return true
    }
}
