import Foundation
public import TandemCore
import TandemStore

extension ConversationService {
    /// What sending a Tandem share URL into a conversation does (the share sheet's choice
    /// between *Collaborate* and *Send copy*; SharedWithYou collaboration article).
    ///
    /// Wire form in `conversations/messages/send`: `"shareMode": "collaborate" | "sendCopy"`
    /// (absent: `sendCopy`, the behaviour before the choice existed) and, with `collaborate`,
    /// an optional `"permission": "READ_ONLY" | "READ_WRITE"` (default `READ_WRITE`, as
    /// membership prompts invite: decisions W9, R1).
    public enum ShareMode: Sendable, Hashable {
        /// The link only: a collaboration highlight for the members, nobody is invited.
        case sendCopy
        /// Every member present now (the sender aside) becomes an invited participant of each
        /// Tandem share the message links, with `permission`; each accepts as any invitee.
        case collaborate(permission: Share.Permission)

        /// Reads `shareMode` and `permission` from a send request's body.
        /// - Throws: `BAD_REQUEST` for another mode, or a permission other than `READ_ONLY` /
        ///   `READ_WRITE`, or a permission without `collaborate`.
        init(_ body: JSONObject) throws {
            let mode = try ConversationRoutes.optionalString(body, "shareMode")
            let permission = try ConversationRoutes.optionalString(body, "permission")
            switch mode {
            case nil, "sendCopy"?:
                guard permission == nil else { throw CloudKitError.badRequest("permission goes with \"shareMode\": \"collaborate\" only") }
                self = .sendCopy
            case "collaborate"?:
                switch permission {
                case nil, "READ_WRITE"?: self = .collaborate(permission: .readWrite)
                case "READ_ONLY"?: self = .collaborate(permission: .readOnly)
                default: throw CloudKitError.badRequest("permission must be READ_ONLY or READ_WRITE")
                }
            default: throw CloudKitError.badRequest("shareMode must be 'collaborate' or 'sendCopy'")
            }
        }
    }
}

/// *Collaborate*: inviting a conversation's members to the shares a message links, in the
/// message's own transaction, so a refusal sends nothing (decisions R1–R3).
enum CollaborateInvitations {
    /// Invites `members` (the sender skipped) to every share of `container`/`environment` that
    /// `urls` name, as `sender`, through the same step membership prompts use
    /// (`MembershipPromptService.apply`: already-active participants and public shares are left
    /// as they are). Returns the membership-notice changes and the change events to publish.
    /// - Throws: `BAD_REQUEST` when no URL names a Tandem share path; `ACCESS_DENIED` when the
    ///   sender is neither the owner nor an accepted administrator of a named share (also for a
    ///   `/share/…` URL naming no share, so a refusal says nothing about which shares exist);
    ///   `TOO_MANY_PARTICIPANTS` when a share would be full; `BAD_REQUEST` when `permission` is
    ///   outside a share's allowed sharing options (R17).
    static func invite(_ tx: any StoreWriting, urls: [String], members: [String], sender: String, permission: Share.Permission,
                       container: String, environment: Environment, limit: Int, at now: Int64)
        throws -> (changes: [ShareMembershipNotices.Change], events: [ChangeEvent]) {
        let guids = urls.compactMap(Collaborations.shareGUID)
        guard !guids.isEmpty else {
            throw CloudKitError.badRequest("\"shareMode\": \"collaborate\" needs a share URL (/share/…) in the message")
        }
        var shares: [StoredShare] = []
        for guid in guids {
            guard let share = try tx.share(shortGUID: guid, container: container, environment: environment),
                  try mayInvite(tx, sender, to: share) else {
                throw CloudKitError(.accessDenied, "only a share's owner or an administrator may invite people to it; send a copy instead")
            }
            shares.append(share)
        }
        var changes: [ShareMembershipNotices.Change] = []
        var events: [ChangeEvent] = []
        for share in shares {
            var added: [String] = []
            for member in members where member != sender {
                if try MembershipPromptService.invite(tx, share: share, person: member, permission: permission, container: container,
                                                     limit: limit, at: now) {
                    added.append(member)
                }
            }
            guard !added.isEmpty else { continue }
            changes += added.map { ShareMembershipNotices.Change(share: share, user: $0, added: true) }
            events.append(try ShareRecords.participantsChanged(tx, share: share, by: sender, container: container, environment: environment, at: now))
        }
        return (changes, events)
    }

    /// The owner, or an accepted `ADMINISTRATOR` participant (who may add participants through
    /// `records/modify` too, D6).
    private static func mayInvite(_ reader: any StoreReading, _ user: String, to share: StoredShare) throws -> Bool {
        if share.owner == user { return true }
        return try reader.participants(share: share).contains {
            $0.userRecordName == user && $0.role == .administrator && $0.status == .accepted
        }
    }
}
