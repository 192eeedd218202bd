import TandemCore
public import TandemStore

/// Deletes an account (issue 16; decisions A15), in one store transaction so nothing is left
/// half done:
///
/// 1. every participation of the person (invited or accepted) ends as leaving a share does
///    (`REMOVED`, the share record touched so the owner's change feed and subscriptions carry it,
///    the zone's viewers recomputed);
/// 2. every zone of their private databases, in every container and environment, is deleted as
///    `zones/modify` deletes one: the zone's shares stop with it and their participants lose the
///    zone from their shared database (their database feeds and subscriptions hear it);
/// 3. their tokens and the server-to-server keys that act as them are revoked (answers say
///    `SESSION_REVOKED`; `tandem key list` shows the keys revoked), and their sign-in methods,
///    consents, emailed links, upload slots and subscriptions are deleted; the `users` row stays
///    without email, names or phone, so the record name is never reused and the email can sign
///    up again as a new account; their avatar is cleared and its file erased once the deletion
///    committed (unless another account set the same bytes; decisions A48).
///
/// Records they wrote into other people's zones and the public database stay (they belong to
/// those zones' owners and the app), as do asset files: they are content-addressed and shared by
/// identical bytes, so the bytes of a deleted zone's assets are unreachable, not erased.
public struct AccountDeletion: Sendable {
    let store: any Store
    /// Publishes the deletion's changes after commit; nil in the CLI (feeds still show them).
    let hub: ChangeHub?

    /// What a deletion did, for the person and the operator.
    public struct Report: Sendable, Hashable {
        public var zones = 0
        public var records = 0
        public var sharesStopped = 0
        public var participationsEnded = 0
        public var sessionsRevoked = 0
        /// Server-to-server keys (`tandem key add`) that acted as the person and worked until now.
        public var serverKeysRevoked = 0

        /// `{zonesDeleted, recordsDeleted, sharesStopped, participationsEnded, sessionsRevoked, serverKeysRevoked}`.
        var json: JSONValue {
            ["zonesDeleted": .int(Int64(zones)), "recordsDeleted": .int(Int64(records)), "sharesStopped": .int(Int64(sharesStopped)),
             "participationsEnded": .int(Int64(participationsEnded)), "sessionsRevoked": .int(Int64(sessionsRevoked)),
             "serverKeysRevoked": .int(Int64(serverKeysRevoked))]
        }

        /// One line for `tandem user remove`.
        public var summary: String {
            "zones=\(zones) records=\(records) shares-stopped=\(sharesStopped) participations-ended=\(participationsEnded) sessions-revoked=\(sessionsRevoked)"
                + " server-keys-revoked=\(serverKeysRevoked)"
        }
    }

    init(store: any Store, hub: ChangeHub?) {
        self.store = store
        self.hub = hub
    }

    /// Deletes the account `user` (a user record name).
    /// - Throws: `NOT_FOUND` when there is no such account (or it was deleted already).
    public func delete(user: String) throws -> Report {
        let now = Clock.milliseconds()
        let hub = self.hub
        let outcome = try store.write({ tx -> Outcome in
            guard let account = try tx.user(recordNameOrEmail: user), account.recordName == user else {
                throw CloudKitError(.notFound, "no account '\(user)'")
            }
            var report = Report()
            var events: [ChangeEvent] = []
            for participation in try tx.participations(user: user) {
                var ended = participation.participant
                ended.status = .removed
                try tx.putParticipant(ended, share: participation.share)
                events.append(try ShareRecords.participantsChanged(tx, share: participation.share, by: user, container: participation.container,
                                                                   environment: participation.environment, at: now))
                report.participationsEnded += 1
            }
            for owned in try tx.privateZones(owner: user) {
                report.zones += 1
                report.records += try tx.recordCount(zone: owned.zone)
                report.sharesStopped += try tx.shares(zone: owned.zone).count
                let viewers = try tx.acceptedParticipants(zone: owned.zone)
                try tx.zoneDeletedFromFeeds(owned.zone, at: now)
                try tx.deleteZone(owned.zone)
                events.append(ChangeEvent(container: owned.container, environment: owned.environment, zone: owned.zone, deviceID: "",
                                          records: [], zoneChanged: true, formerViewers: viewers))
            }
            let unusedAvatar = try tx.setAvatar(user: user, nil)
            report.sessionsRevoked = try tx.eraseAccount(user: user, at: now)
            report.serverKeysRevoked = try tx.revokeServerKeys(user: user, at: now)
            return Outcome(report: report, events: events, unusedAvatar: unusedAvatar)
        }, afterCommit: { outcome in
            outcome.events.forEach { hub?.publish($0) }
        })
        // After the commit, not in the hook: the release reads the store (P6).
        if let checksum = outcome.unusedAvatar { AvatarFileKeeper.release(checksum, store: store) }
        return outcome.report
    }

    struct Outcome: @unchecked Sendable {
        var report: Report
        var events: [ChangeEvent]
        /// The avatar file no account holds any more (erased after the commit).
        var unusedAvatar: String?
    }
}
