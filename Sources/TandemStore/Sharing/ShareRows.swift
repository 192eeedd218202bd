import TandemCore

/// Shares and participants as both stores select them: the column lists and their decoders
/// (decisions P44). Values the store does not know read as the safest case (no public
/// permission, a private user, read-only, pending), as they always have.
package enum ShareRows {
    /// A share and its zone, `shares s JOIN zones z`; `share(_:)` reads them (12 columns).
    package static let shareColumns = """
        s.id, s.record_name, s.root_name, s.short_guid, s.public_permission, s.allows_access_requests, s.created_at, \
        z.id, z.name, z.owner, z.change_seq, z.created_at
        """

    package static func share(_ row: some StoredRow) throws -> StoredShare {
        let zone = StoredZone(key: try row.int64(7), zoneID: ZoneID(zoneName: try row.string(8), ownerRecordName: try row.string(9)),
                              changeSequence: try row.int64(10), createdAt: try row.int64(11))
        return StoredShare(key: try row.int64(0), zone: zone, recordName: try row.string(1), rootRecordName: try row.optionalString(2),
                           shortGUID: try row.string(3), publicPermission: Share.Permission(rawValue: try row.string(4)) ?? .none,
                           allowsAccessRequests: try row.flag(5), createdAt: try row.int64(6))
    }

    /// A participant's columns, `share_participants p`; `participant(_:from:)` reads them (10 columns).
    package static let participantColumns = """
        p.participant_id, p.user_record_name, p.email, p.phone, p.role, p.permission, p.status, p.approved_requester, p.added_at,
        p.declined_at
        """

    package static func participant(_ row: some StoredRow, from index: Int = 0) throws -> StoredParticipant {
        StoredParticipant(participantID: try row.string(index), userRecordName: try row.optionalString(index + 1),
                          email: try row.optionalString(index + 2), phone: try row.optionalString(index + 3),
                          role: Share.Role(rawValue: try row.string(index + 4)) ?? .privateUser,
                          permission: Share.Permission(rawValue: try row.string(index + 5)) ?? .readOnly,
                          status: Share.AcceptanceStatus(rawValue: try row.string(index + 6)) ?? .pending,
                          isApprovedRequester: try row.flag(index + 7), addedAt: try row.int64(index + 8),
                          declinedAt: try row.optionalInt64(index + 9))
    }
}
