public import Foundation
internal import TandemCore

/// A share (CloudKit's `CKShare`): a `cloudkit.share` record that gives other people access to a
/// root record and everything below it through `parent`, or (zone-wide) to a whole zone.
///
/// ```swift
/// var share = Share(rootRecord: trip)
/// share.title = "Lisbon in May"
/// share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
/// let result = try await database.modifyRecords(saving: [trip, share.record], deleting: [])
/// let saved = try result.savedShare(share)
/// print(saved.url!)       // send this to Bob; he calls container.shareMetadata(for:) and accept(_:)
/// ```
///
/// Rules (cloudkit.md §2.1, decisions T1–T30): shares live in custom zones of the owner's private
/// database; root and share are saved in one request; share saves are always version-checked;
/// the participant list saved is the complete list (leave someone out to remove them); at most
/// 100 participants with the owner (T20). Errors: `alreadyShared` (the root is in another share),
/// `tooManyParticipants`, `serverRecordChanged`, `permissionFailure`.
public struct Share: Sendable, Hashable {
    /// The share record type (`CKRecord.SystemType.share`).
    public static let recordType = "cloudkit.share"
    /// The record name of every zone-wide share (`CKRecordNameZoneWideShare`).
    public static let zoneWideShareRecordName = "cloudkit.zoneshare"

    var base: Record
    var rootRecordID: Record.ID?
    var participantsChanged = false
    var publicPermissionChanged = false
    var allowedSharingOptionsChanged = false

    public var recordID: Record.ID { base.recordID }
    /// Everyone on the share the caller may see, the owner first (T6).
    public private(set) var participants: [Participant]
    /// What anyone with the URL gets: `.none` (invitees only), `.readOnly` or `.readWrite`.
    public var publicPermission: ParticipantPermission { didSet { publicPermissionChanged = true } }
    /// Whether people without an invitation may ask to join (D7).
    public var allowsAccessRequests: Bool { didSet { publicPermissionChanged = true } }
    /// The sharing choices this share allows, within the container's policy
    /// (`CKAllowedSharingOptions`; decisions R16): sent with the next save when changed, then
    /// every save checks what it grants against them. `standard` until set.
    public var allowedSharingOptions: AllowedSharingOptions { didSet { allowedSharingOptionsChanged = true } }
    /// The share URL's token (the server's `shortGUID`); nil until saved.
    var shortGUID: String?
    /// The share URL, `{server}/share/{shortGUID}`; nil until saved.
    public internal(set) var url: URL?
    /// The caller's own participant, when they are one.
    public internal(set) var currentUserParticipant: Participant?
    /// The owner participant.
    public var owner: Participant? { participants.first { $0.role == .owner } }
    /// People asking to join (`CKShare.requesters`, decisions D7, T6): shown to the owner and
    /// administrators only (empty for everyone else), oldest request first. Answer them with
    /// `Container.approveRequesters(_:of:permission:)`, `denyRequesters(_:of:)` or
    /// `blockRequesters(_:of:)`.
    public internal(set) var requesters: [AccessRequester]
    /// People barred from asking to join (`CKShare.blockedIdentities`, D7, T9): owner and
    /// administrators only. They stay here until `Container.unblockIdentities(_:of:)`.
    public internal(set) var blockedIdentities: [BlockedIdentity]
    /// The share's title (`CKShare.SystemFieldKey.title`).
    public var title: String? {
        get { base["cloudkit.title"] as? String }
        set { base["cloudkit.title"] = newValue }
    }
    /// A small image of the shared item (`CKShare.SystemFieldKey.thumbnailImageData`), stored as
    /// BYTES within the 1 MiB record limit. The share page shows it (for a public share) from
    /// `/share/{shortGUID}/thumbnail`; PNG, JPEG, GIF or WebP.
    public var thumbnailImageData: Data? {
        get { base["cloudkit.thumbnailImageData"] as? Data }
        set { base["cloudkit.thumbnailImageData"] = newValue }
    }
    /// The shared item's uniform type identifier (`CKShare.SystemFieldKey.shareType`, the field
    /// `cloudkit.type`), e.g. `com.example.trip`: a collaboration highlight's `contentType`
    /// (else `com.apple.cloudkit.share`), shown on the share page. Changing it or `title`
    /// updates the highlights of conversations the share's URL was sent to (decisions R4).
    public var type: String? {
        get { base["cloudkit.type"] as? String }
        set { base["cloudkit.type"] = newValue }
    }

    /// A new share of `rootRecord` and its descendants, in the root's zone (`CKShare(rootRecord:)`).
    /// Save it together with the root (`modifyRecords(saving: [root, share.record], ...)`).
    public init(rootRecord: Record, shareID: Record.ID? = nil) {
        base = Record(recordType: Self.recordType, recordID: shareID ?? Record.ID(zoneID: rootRecord.recordID.zoneID))
        rootRecordID = rootRecord.recordID
        participants = []
        requesters = []
        blockedIdentities = []
        publicPermission = .none
        allowsAccessRequests = false
        allowedSharingOptions = .standard
        participantsChanged = false
        publicPermissionChanged = true
    }

    /// A new share of a whole zone (`CKShare(recordZoneID:)`).
    public init(recordZoneID: RecordZone.ID) {
        base = Record(recordType: Self.recordType, recordID: Record.ID(recordName: Self.zoneWideShareRecordName, zoneID: recordZoneID))
        participants = []
        requesters = []
        blockedIdentities = []
        publicPermission = .none
        allowsAccessRequests = false
        allowedSharingOptions = .standard
        publicPermissionChanged = true
    }

    /// The share a fetched `cloudkit.share` record holds; nil for other records.
    public init?(_ record: Record) {
        guard record.recordType == Self.recordType, let state = record.shareState else { return nil }
        base = record
        base.shareState = nil
        base.changed = []
        participants = state.participants.map(Participant.init(wire:))
        requesters = (state.requesters ?? []).map { AccessRequester(userIdentity: UserIdentity(wire: $0)) }
        blockedIdentities = (state.blockedIdentities ?? []).map { BlockedIdentity(userIdentity: UserIdentity(wire: $0)) }
        publicPermission = ParticipantPermission(rawValue: state.publicPermission.rawValue) ?? .none
        allowsAccessRequests = state.allowsAccessRequests
        allowedSharingOptions = AllowedSharingOptions(wire: state.allowedSharingOptions)
        url = state.url.flatMap(URL.init(string:))
        shortGUID = state.shortGUID
        currentUserParticipant = state.currentUserParticipant.map(Participant.init(wire:))
        publicPermissionChanged = false
    }

    /// Adds an invitee (`CKShare.addParticipant(_:)`); sent with the next save.
    public mutating func addParticipant(_ participant: Participant) {
        participants.append(participant)
        participantsChanged = true
    }

    /// Removes a participant (`CKShare.removeParticipant(_:)`): by participant ID, else by
    /// lookup info. Sent with the next save; the owner cannot be removed.
    public mutating func removeParticipant(_ participant: Participant) {
        participants.removeAll { candidate in
            if let id = participant.participantID { return candidate.participantID == id }
            return candidate.userIdentity.lookupInfo == participant.userIdentity.lookupInfo
        }
        participantsChanged = true
    }

    /// This share's changes relative to `base` (the version they were made on) applied to
    /// `server` (a newer version, e.g. after invitees accepted): participants added, removed, or
    /// with a changed permission or role, and the public permission. Used when a save meets
    /// `serverRecordChanged` (K31).
    func rebased(from base: Share, onto server: Share) -> Share {
        var merged = server
        let baseIDs = Dictionary(base.participants.compactMap { p in p.participantID.map { ($0, p) } }, uniquingKeysWith: { a, _ in a })
        let mineIDs = Set(participants.compactMap(\.participantID))
        for (id, _) in baseIDs where !mineIDs.contains(id) { merged.participants.removeAll { $0.participantID == id } }
        for mine in participants {
            if let id = mine.participantID, let before = baseIDs[id] {
                guard mine.permission != before.permission || mine.role != before.role,
                      let index = merged.participants.firstIndex(where: { $0.participantID == id }) else { continue }
                merged.participants[index].permission = mine.permission
                merged.participants[index].role = mine.role
            } else if mine.participantID == nil {
                merged.participants.append(mine)
            }
        }
        merged.participantsChanged = participantsChanged
        if publicPermissionChanged {
            merged.publicPermission = publicPermission
            merged.allowsAccessRequests = allowsAccessRequests
        }
        if allowedSharingOptionsChanged { merged.allowedSharingOptions = allowedSharingOptions }
        return merged
    }

    /// The share as a record to pass to `modifyRecords(saving:...)`, carrying the share keys.
    public var record: Record {
        var record = base
        record.shareDraft = ShareDraft(
            forRecord: base.recordChangeTag == nil ? rootRecordID?.recordName : nil,
            participants: participantsChanged ? participants.filter { $0.role != .owner }.map(\.request) : nil,
            publicPermission: publicPermissionChanged ? publicPermission : nil,
            allowsAccessRequests: publicPermissionChanged ? allowsAccessRequests : nil,
            allowedSharingOptions: allowedSharingOptionsChanged ? allowedSharingOptions : nil)
        return record
    }

    public static func == (lhs: Share, rhs: Share) -> Bool { lhs.record == rhs.record && lhs.participants == rhs.participants }
    public func hash(into hasher: inout Hasher) { hasher.combine(base) }
}

/// The share keys of a `records/modify` share operation (decisions T23): `forRecord`,
/// `participants`, `publicPermission`, `allowsAccessRequests`, `allowedSharingOptions`.
struct ShareDraft: Sendable {
    var forRecord: String?
    var participants: [JSONValue]?
    var publicPermission: Share.ParticipantPermission?
    var allowsAccessRequests: Bool?
    var allowedSharingOptions: AllowedSharingOptions?

    func encode(into record: inout JSONObject) {
        if let forRecord { record["forRecord"] = .object(["recordName": .string(forRecord)]) }
        if let participants { record["participants"] = .array(participants) }
        if let publicPermission { record["publicPermission"] = .string(publicPermission.rawValue) }
        if let allowsAccessRequests { record["allowsAccessRequests"] = .bool(allowsAccessRequests) }
        if let allowedSharingOptions { record["allowedSharingOptions"] = allowedSharingOptions.json }
    }
}
