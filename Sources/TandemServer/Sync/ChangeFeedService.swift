public import TandemCore
public import TandemStore

/// Change feeds (CloudKit Web Services: changes/database, changes/zone, and the legacy
/// records/changes and zones/changes; cloudkit.md §1.6; decisions D3, D9).
///
/// Tokens are opaque, versioned and MAC-protected (`SyncTokens`). A zone token names the zone,
/// its change sequence, the viewer and the set of shares the viewer reads the zone through: a
/// token from another zone or user is `BAD_REQUEST`; a token older than the retained history,
/// or taken before the viewer's shares in the zone changed, is `CHANGE_TOKEN_EXPIRED` (the
/// client fetches again from no token). No token lists everything currently visible. A token is
/// also `CHANGE_TOKEN_EXPIRED` when another copy of this store issued it after the two parted
/// (it carries a generation this store does not descend from: decisions P78), or when it is
/// ahead of the zone's or the feed's sequence (a copy that went back, as a restored backup).
struct ChangeFeedService: Sendable {
    let store: any Store
    let tokens: SyncTokens

    /// One `zones[]` entry of changes/zone, with the request's top-level values filled in.
    struct ZoneRequest: Sendable {
        var zoneID: ZoneID
        var syncToken: String?
        var resultsLimit: Int
        var desiredKeys: Set<String>?
        var desiredRecordTypes: Set<String>?
        /// The response formats numbers as strings (needs decoded fields).
        var numbersAsStrings = false
    }

    enum ZoneResult: Sendable {
        /// Records changed (tombstones have `deleted`), the zone's new token, and whether more follow.
        case changes(zoneID: ZoneID, syncToken: String, records: [Record], moreComing: Bool, desiredKeys: Set<String>?)
        case failed(CloudKitError)
    }

    func zoneChanges(_ requests: [ZoneRequest], scope: RequestScope) throws -> [ZoneResult] {
        try store.read { reader in
            let generation = try reader.generation(accepting: nil).current
            return requests.map { request in
                do {
                    return try zoneChanges(request, scope: scope, reader: reader, generation: generation)
                } catch let error as CloudKitError {
                    var error = error
                    error.zoneID = error.zoneID ?? request.zoneID
                    return .failed(error)
                } catch {
                    return .failed(CloudKitError(.internalError, "\(error)", zoneID: request.zoneID))
                }
            }
        }
    }

    /// Refuses a token another copy of this store issued after they parted (P78).
    private func checkGeneration(_ token: SyncTokens.Values, current: Int64, reader: any StoreReading) throws {
        guard let issued = token.generation, issued != current else { return }
        guard try reader.generation(accepting: issued).accepts else {
            throw CloudKitError(.changeTokenExpired, "syncToken was issued by another copy of this store (one made or left behind by "
                                + "tandem migrate, or a restored backup); fetch again without a syncToken")
        }
    }

    private func zoneChanges(_ request: ZoneRequest, scope: RequestScope, reader: any StoreReading, generation: Int64) throws -> ZoneResult {
        guard let (access, _) = try RecordService.resolve(reader, scope, request.zoneID) else {
            // A default zone never written to: nothing yet.
            return .changes(zoneID: request.zoneID, syncToken: tokens.zoneToken(nil, generation: generation, viewer: FeedTags.viewer(scope.user)),
                            records: [], moreComing: false, desiredKeys: request.desiredKeys)
        }
        let zone = access.zone
        let viewer = FeedTags.viewer(scope.user)
        let shares = FeedTags.shares(access.acceptedShareKeys)
        var after: Int64 = 0
        // A listing without a token that takes several pages: its page tokens carry where the
        // listing began. Deletions before that point are skipped (the client never had those
        // records) and their purge does not expire the listing; later deletions are sent.
        var listingStart: Int64 = request.syncToken == nil ? zone.changeSequence : 0
        if let text = request.syncToken {
            guard let token = tokens.decode(text, kind: .zone), token.values.count >= 2 else {
                throw CloudKitError.badRequest("syncToken is not a zone token this server issued")
            }
            let values = token.values
            guard values[0] == zone.key || values[0] == 0 && values[1] == 0 else {
                throw CloudKitError.badRequest("syncToken belongs to another zone")
            }
            if values.count == 4 {
                guard values[2] == viewer || values[2] == 0 && access.isOwner else {
                    throw CloudKitError.badRequest("syncToken belongs to another user")
                }
                guard values[3] == shares else {
                    throw CloudKitError(.changeTokenExpired, "your shares in this zone changed since this token; fetch the zone again without a syncToken")
                }
            }
            if values.count >= 5 { listingStart = values[4] }
            after = values[1]
            try checkGeneration(token, current: generation, reader: reader)
            guard after <= zone.changeSequence else {
                throw CloudKitError(.changeTokenExpired, "syncToken is ahead of this zone's changes (a copy of this store that went back, "
                                    + "such as a restored backup, or one left behind by tandem migrate); fetch the zone again without a syncToken")
            }
            if (listingStart > 0 ? listingStart : after) < (try reader.purgedSequence(zone: zone)) {
                throw CloudKitError(.changeTokenExpired, "syncToken is older than the retained change history; fetch the zone again without a syncToken")
            }
        }
        let limit = request.resultsLimit
        // Records come with their changes, their stored fields passed on undecoded unless the
        // response must pick or reformat fields.
        let page = try reader.zoneChangePage(zone: zone, after: after, limit: limit + 1, memberships: access.readableMemberships,
                                             decodeFields: request.desiredKeys != nil || request.numbersAsStrings)
        let more = page.count > limit
        let taken = page.prefix(limit).map(\.change)
        var records: [Record] = []
        for (change, record, membership) in page.prefix(limit) {
            if let types = request.desiredRecordTypes, !types.contains(change.recordType) { continue }
            guard let record else {
                // A tombstone or exit; a listing has nothing to delete from before it began.
                if change.sequence > listingStart {
                    records.append(Record(recordName: change.recordName, recordType: change.recordType, zoneID: zone.zoneID, deleted: true))
                }
                continue
            }
            guard access.decide(.read, membership: membership).isAllowed else { continue }
            records.append(record)
        }
        if records.contains(where: { $0.recordType == Share.recordType }) {
            let presenter = SharePresenter(reader: reader, baseURL: scope.baseURL, signer: scope.avatarSigner)
            for index in records.indices where records[index].recordType == Share.recordType && !records[index].deleted {
                if let share = access.shares[records[index].recordName] {
                    records[index].sharing = try presenter.present(share, viewer: scope.user)
                }
            }
        }
        let sequence = more ? (taken.last?.sequence ?? after) : max(after, zone.changeSequence)
        let token = tokens.zoneToken(zone, generation: generation, sequence: sequence, viewer: viewer, shares: shares,
                                     listingStart: more ? listingStart : 0)
        return .changes(zoneID: zone.zoneID, syncToken: token, records: records, moreComing: more, desiredKeys: request.desiredKeys)
    }

    /// The zones of the caller's private or shared database that changed since `syncToken`
    /// (all current zones without one), with deletions and their reasons (D3).
    func databaseChanges(syncToken: String?, limit: Int, scope: RequestScope) throws
        -> (zones: [DatabaseChange], syncToken: String, moreComing: Bool) {
        let owner = FeedOwner(viewer: scope.user, container: scope.database.container, environment: scope.database.environment,
                              scope: scope.database.database)
        let tag = FeedTags.database(owner)
        return try store.read { reader in
            let clock = try reader.feedClock()
            let generation = try reader.generation(accepting: nil).current
            guard let syncToken else {
                return try listing(reader, owner: owner, scope: scope, tag: tag, generation: generation, start: clock.sequence,
                                   afterZone: nil, limit: limit)
            }
            guard let token = tokens.decode(syncToken, kind: .database), token.values.count == 2 || token.values.count == 3 else {
                throw CloudKitError.badRequest("syncToken is not a database token this server issued")
            }
            let values = token.values
            guard values[0] == tag else {
                throw CloudKitError.badRequest("syncToken belongs to another database or user")
            }
            guard values[1] >= clock.purged else {
                throw CloudKitError(.changeTokenExpired, "syncToken is older than the retained change history; fetch again without a syncToken")
            }
            try checkGeneration(token, current: generation, reader: reader)
            guard values[1] <= clock.sequence else {
                throw CloudKitError(.changeTokenExpired, "syncToken is ahead of this database's changes (a copy of this store that went back, "
                                    + "such as a restored backup, or one left behind by tandem migrate); fetch again without a syncToken")
            }
            if values.count == 3 {
                // A listing of the zones that exist, paged by resultsLimit (decisions J11).
                return try listing(reader, owner: owner, scope: scope, tag: tag, generation: generation, start: values[1],
                                   afterZone: values[2], limit: limit)
            }
            let page = try reader.databaseChanges(owner, after: values[1], limit: limit + 1)
            let more = page.count > limit
            let taken = Array(page.prefix(limit))
            let sequence = more ? (taken.last?.sequence ?? values[1]) : max(values[1], clock.sequence)
            return (taken, tokens.encode(kind: .database, generation: generation, tag, sequence), more)
        }
    }

    /// A page of the first listing (no syncToken): the zones that exist now, by zone key after
    /// `afterZone`, at most `limit`. While more remain the token continues the listing (tag, the
    /// sequence it began at, the last zone key); the last page's token is a change token from
    /// where the listing began, so zones created or deleted meanwhile come next.
    private func listing(_ reader: any StoreReading, owner: FeedOwner, scope: RequestScope, tag: Int64, generation: Int64, start: Int64,
                         afterZone: Int64?, limit: Int) throws -> (zones: [DatabaseChange], syncToken: String, moreComing: Bool) {
        let zones = try currentZones(reader, owner: owner, scope: scope).sorted { $0.zoneKey < $1.zoneKey }
            .filter { afterZone == nil || $0.zoneKey > afterZone! }
        guard zones.count > limit else { return (zones, tokens.encode(kind: .database, generation: generation, tag, start), false) }
        let taken = Array(zones.prefix(limit))
        return (taken, tokens.encode(kind: .database, generation: generation, tag, start, taken.last!.zoneKey), true)
    }

    /// Every zone the database holds now.
    private func currentZones(_ reader: any StoreReading, owner: FeedOwner, scope: RequestScope) throws -> [DatabaseChange] {
        if owner.scope == .shared {
            var seen = Set<Int64>()
            return try reader.acceptedShares(user: owner.viewer, container: owner.container, environment: owner.environment).compactMap { share, _ in
                guard seen.insert(share.zone.key).inserted else { return nil }
                return DatabaseChange(zoneKey: share.zone.key, zoneID: share.zone.zoneID, sequence: 0, deleted: false, reason: nil)
            }
        }
        return try reader.zones(scope.database).map {
            DatabaseChange(zoneKey: $0.key, zoneID: $0.zoneID, sequence: 0, deleted: false, reason: nil)
        }
    }
}
