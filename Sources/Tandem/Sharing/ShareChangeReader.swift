import TandemCore

/// Turns a sync engine's events into `ShareObserver.Event`s by comparing each owned share with
/// the version seen before (decisions R8–R11). Called on the engine's run, one event at a time.
final class ShareChangeReader: Sendable {
    private struct State {
        /// The last version seen of each owned share.
        var known: [Record.ID: Share] = [:]
        /// Zones being read from the start (no token): their records are state, not changes.
        var listing: Set<RecordZone.ID> = []
    }

    private let state = Locked(State())

    func remember(_ shares: [Share]) {
        state.withLock { state in
            for share in shares where Self.isOwned(share) { state.known[share.recordID] = share }
        }
    }

    func read(_ event: SyncEngine.Event, hasFetched: (RecordZone.ID) -> Bool) -> [ShareObserver.Event] {
        state.withLock { state in
            switch event {
            case .willFetchRecordZoneChanges(let zoneID):
                if !hasFetched(zoneID) { state.listing.insert(zoneID) }
                return []
            case .recordZoneChangesRestarted(let zoneID):
                state.listing.insert(zoneID)
                return []
            case .didFetchRecordZoneChanges(let zoneID, _):
                state.listing.remove(zoneID)
                return []
            case .fetchedRecordZoneChanges(let changes):
                var events: [ShareObserver.Event] = []
                for record in changes.modifications where record.recordType == Share.recordType {
                    guard let share = Share(record), Self.isOwned(share) else { continue }
                    let known = state.known[share.recordID]
                    if known == nil && state.listing.contains(record.recordID.zoneID) {
                        // A listing shows state, not what changed: a share not seen before is
                        // reported as it stands (R10).
                        events.append(.saved(share))
                    } else {
                        events += Self.changes(from: known, to: share)
                    }
                    state.known[share.recordID] = share
                }
                for deletion in changes.deletions where deletion.recordType == Share.recordType
                    && deletion.recordID.zoneID.ownerName == RecordZone.ID.currentUserOwnerName {
                    state.known[deletion.recordID] = nil
                    events.append(.stopped(deletion.recordID))
                }
                return events
            case .fetchedDatabaseChanges(let changes):
                // A deleted zone takes its shares with it, without a tombstone for each.
                let gone = Set(changes.deletions.map(\.zoneID))
                let stopped = state.known.keys.filter { gone.contains($0.zoneID) }.sorted { $0.recordName < $1.recordName }
                for id in stopped { state.known[id] = nil }
                return stopped.map { .stopped($0) }
            case .sentRecordZoneChanges(let sent):
                // This device's own saves and deletions through the engine.
                var events: [ShareObserver.Event] = []
                for record in sent.savedRecords where record.recordType == Share.recordType {
                    guard let share = Share(record), Self.isOwned(share) else { continue }
                    if state.known[share.recordID]?.base.recordChangeTag != share.base.recordChangeTag { events.append(.saved(share)) }
                    state.known[share.recordID] = share
                }
                for id in sent.deletedRecordIDs where state.known[id] != nil {
                    state.known[id] = nil
                    events.append(.stopped(id))
                }
                return events
            case .accountChange(let change):
                if case .signIn = change { return [] }
                state.known = [:]
                return []
            case .stateUpdate, .sentDatabaseChanges, .willFetchChanges, .didFetchChanges, .willSendChanges, .didSendChanges:
                return []
            }
        }
    }

    /// Shares the signed-in user owns: they are their own share's owner participant.
    static func isOwned(_ share: Share) -> Bool { share.currentUserParticipant?.role == .owner }

    /// What happened between `old` (nil: not seen since the observer started) and `new`.
    static func changes(from old: Share?, to new: Share) -> [ShareObserver.Event] {
        if let old, old.base.recordChangeTag == new.base.recordChangeTag { return [] }
        let modifier = new.base.lastModifiedUserRecordID?.recordName
        let ownerName = new.owner?.userIdentity.userRecordID?.recordName
        func isModifier(_ identity: UserIdentity) -> Bool { modifier != nil && identity.userRecordID?.recordName == modifier }
        var events: [ShareObserver.Event] = []
        var explained = false
        guard let old else {
            // First sight: the stamp alone says who made this version.
            if let participant = new.participants.first(where: { $0.role != .owner && isModifier($0.userIdentity) }) {
                if participant.acceptanceStatus == .accepted { return [.accepted(new, participant: participant)] }
                if participant.acceptanceStatus == .removed { return [.left(new, participant: participant)] }
            }
            if let requester = new.requesters.first(where: { isModifier($0.userIdentity) }) {
                return [.accessRequested(new, requester: requester)]
            }
            if modifier == nil || modifier == ownerName || new.participants.contains(where: { isModifier($0.userIdentity) }) {
                return [.saved(new)]
            }
            // Someone no longer on the share made this version: they left.
            var gone = Share.Participant(lookupInfo: .init(userRecordID: Record.ID(recordName: modifier!)))
            gone.acceptanceStatus = .removed
            return [.left(new, participant: gone)]
        }
        let before = Dictionary(old.participants.compactMap { p in p.participantID.map { ($0, p) } }, uniquingKeysWith: { a, _ in a })
        for participant in new.participants where participant.role != .owner && participant.acceptanceStatus == .accepted {
            guard let id = participant.participantID, before[id]?.acceptanceStatus != .accepted else { continue }
            events.append(.accepted(new, participant: participant))
            if isModifier(participant.userIdentity) { explained = true }
        }
        let now = Dictionary(new.participants.compactMap { p in p.participantID.map { ($0, p) } }, uniquingKeysWith: { a, _ in a })
        for participant in old.participants where participant.role != .owner && participant.acceptanceStatus != .removed {
            guard let id = participant.participantID, now[id] == nil || now[id]?.acceptanceStatus == .removed,
                  isModifier(participant.userIdentity) else { continue }
            events.append(.left(new, participant: participant))
            explained = true
        }
        let asked = Set(old.requesters.compactMap(\.userIdentity.userRecordID))
        for requester in new.requesters where requester.userIdentity.userRecordID.map({ !asked.contains($0) }) ?? false {
            events.append(.accessRequested(new, requester: requester))
            if isModifier(requester.userIdentity) { explained = true }
        }
        // The owner's or an administrator's save; also any version the steps above do not explain.
        if !explained { events.insert(.saved(new), at: 0) }
        return events
    }
}
