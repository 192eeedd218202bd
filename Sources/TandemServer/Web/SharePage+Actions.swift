import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The share page's forms (decisions C14, C15). Each calls what the JSON API calls, as the
/// viewer: `records/modify` of the share record (participants, roles, permissions, the public
/// link, stopping and leaving), `ShareService` (accept, decline, access requests), so every
/// rule, limit and invitation email is the API's. A field the page can check itself (an email
/// address, a permission) is checked before any service is called, so bad input writes nothing.
extension SharePage {
    /// Performs `action` as `viewer` and answers the redirect to `base?done={action}` (`base`:
    /// the page's path, `/share/{shortGUID}` or the console's, C17).
    func perform(_ action: String, fields: [String: String], viewer: ShareSession.Viewer, found: Found,
                 visit: inout Visit, base: String) throws -> HTTPResponse {
        let user = viewer.user
        let guid = visit.guid
        let context = visit.context
        switch action {
        case "signout":
            try services.accounts.signOut(token: viewer.token)
            visit.setCookies = [ShareSession.clearCookie(guid: guid, secure: context.baseURL.hasPrefix("https://"))]
        case "accept":
            try Self.first(try services.shares.accept([ShareService.ShortGUIDRequest(value: guid)], user: user,
                                                      scope: scope(found, user, .public, context)))
        case "decline":
            try Self.first(try services.shares.declineInvitations([guid], user: user, scope: scope(found, user, .private, context)))
        case "request":
            try Self.first(try services.shares.requestAccess([guid], user: user, scope: scope(found, user, .private, context)))
        case "approve", "deny":
            guard let requester = fields["user"], !requester.isEmpty else { throw CloudKitError.badRequest("choose whose request to answer") }
            // Read-only (CloudKit's default for an approval) unless the share allows read-write only (R18).
            let options = try services.store.read { try SharingOptionsPolicy.effective($0, share: found.share, container: found.container) }
            _ = try services.shares.manageRequesters(action == "approve" ? .approve : .deny, guid: guid, users: [requester],
                                                     permission: options.permission == .readWrite ? .readWrite : .readOnly, caller: user,
                                                     scope: scope(found, user, .private, context))
        case "leave", "stop":
            // Deleting the share record stops sharing for its owner and is leaving for anyone
            // else (D5): each form says which it means.
            let isOwner = user.recordName == found.share.owner
            if action == "stop" && !isOwner { throw CloudKitError(.accessDenied, "only the owner can stop sharing") }
            if action == "leave" && isOwner { throw CloudKitError.badRequest("the owner cannot leave; stop sharing instead") }
            if action == "stop" && fields["confirm"] != "yes" {
                throw FieldProblem(field: "confirm", error: .badRequest("tick the box to confirm: everyone else loses access at once"))
            }
            try saveShare(found, user, context, delete: true, ShareCodec.Changes())
        case "invite":
            let email = try Self.email(fields["email"])
            let permission = try Self.permission(fields["permission"])
            try changeParticipants(found, user, context) { list in
                list.append(ShareCodec.ParticipantRequest(lookup: UserIdentity(emailAddress: email), role: .privateUser, permission: permission))
            }
        case "participant":
            let id = try Self.participant(fields)
            let permission = try Self.permission(fields["permission"])
            var role: Share.Role?
            if let text = fields["role"] {
                guard let value = Share.Role(rawValue: text), value == .privateUser || value == .administrator else {
                    throw CloudKitError.badRequest("choose Participant or Administrator")
                }
                role = value
            }
            try changeParticipants(found, user, context) { list in
                guard let index = list.firstIndex(where: { $0.participantID == id }) else {
                    throw CloudKitError(.notFound, "that person is no longer on this share; reload the page")
                }
                list[index].permission = permission
                list[index].role = role
            }
        case "remove":
            let id = try Self.participant(fields)
            try changeParticipants(found, user, context) { list in
                guard let index = list.firstIndex(where: { $0.participantID == id }) else {
                    throw CloudKitError(.notFound, "that person is no longer on this share; reload the page")
                }
                list.remove(at: index)
            }
        case "public-link":
            guard let text = fields["permission"], let permission = Share.Permission(rawValue: text), permission != .unknown else {
                throw FieldProblem(field: "permission", error: .badRequest("choose who the link lets in"))
            }
            try saveShare(found, user, context, delete: false,
                          ShareCodec.Changes(publicPermission: permission, allowsAccessRequests: fields["requests"] == "on"))
        default:
            throw CloudKitError(.notFound, "no such action")
        }
        return redirect("\(base)?done=\(action)")
    }

    // MARK: Through records/modify

    /// The viewer's scope in `database` of the share's container and environment.
    private func scope(_ found: Found, _ user: UserAccount, _ database: DatabaseType, _ context: RequestContext) -> RequestScope {
        RequestScope(database: DatabaseScope(container: found.container, environment: found.environment, database: database,
                                             owner: user.recordName),
                     user: user.recordName, baseURL: context.baseURL, mailBaseURL: context.mailLinkBaseURL)
    }

    /// Sends the share's participant list as it is now (each person by `participantId`, so
    /// nothing else changes, declined invitees included, A44), changed by `edit`.
    private func changeParticipants(_ found: Found, _ user: UserAccount, _ context: RequestContext,
                                    _ edit: (inout [ShareCodec.ParticipantRequest]) throws -> Void) throws {
        let current = try services.store.read { try $0.participants(share: found.share) }
        var list = current.filter { $0.status != .removed || $0.isDeclined }
            .map { ShareCodec.ParticipantRequest(participantID: $0.participantID, lookup: UserIdentity()) }
        try edit(&list)
        try saveShare(found, user, context, delete: false, ShareCodec.Changes(participants: list))
    }

    /// One `records/modify` of the share record as the viewer: the owner in their private
    /// database, anyone else in their shared database (an administrator's changes, a
    /// participant's leaving). The change tag is the one stored now: the page's forms name
    /// people, not versions, and the save is still checked against concurrent writers.
    private func saveShare(_ found: Found, _ user: UserAccount, _ context: RequestContext, delete: Bool,
                           _ changes: ShareCodec.Changes) throws {
        let share = found.share
        guard let tag = try services.store.read({ try $0.record(zone: share.zone, name: share.recordName) })?.recordChangeTag else {
            throw CloudKitError(.notFound, AccessPolicy.hiddenReason)
        }
        let isOwner = user.recordName == share.owner
        let operation = RecordOperation(kind: delete ? .delete : .update, recordName: share.recordName, recordType: Share.recordType,
                                        recordChangeTag: tag, fields: [:], clearsParent: false, shareChanges: changes)
        let zoneID = ZoneID(zoneName: share.zone.zoneID.zoneName, ownerRecordName: isOwner ? nil : share.owner)
        let results = try services.records.modify([operation], zoneID: zoneID, atomic: true,
                                                  scope: scope(found, user, isOwner ? .private : .shared, context))
        if case .failed(let error)? = results.first { throw error }
    }

    // MARK: Fields

    /// The first item's error, thrown; per-item services answer one item here.
    private static func first<T>(_ results: [Result<T, CloudKitError>]) throws {
        if case .failure(let error)? = results.first { throw error }
    }

    /// An email address as a person types it: trimmed, `local@domain`, at most 254 characters
    /// (RFC 5321's path limit), no spaces or control characters.
    static func email(_ text: String?) throws(FieldProblem) -> String {
        let email = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
              !parts[1].hasSuffix("."), email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw FieldProblem(field: "email", error: .badRequest("enter an email address, like name@example.com"))
        }
        return email
    }

    static func permission(_ text: String?) throws -> Share.Permission {
        guard let text, let permission = Share.Permission(rawValue: text), permission == .readOnly || permission == .readWrite else {
            throw CloudKitError.badRequest("choose Can view or Can make changes")
        }
        return permission
    }

    static func participant(_ fields: [String: String]) throws -> String {
        guard let id = fields["participant"], !id.isEmpty else { throw CloudKitError.badRequest("choose a person") }
        return id
    }
}

/// A refusal that concerns one field of the form, shown beside it (C15).
struct FieldProblem: Error {
    /// The field's `name`.
    var field: String
    var error: CloudKitError
}
