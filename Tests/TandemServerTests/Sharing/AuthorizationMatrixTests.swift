import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Every sharing-relevant endpoint × every role, against the real server (DESIGN.md §6). Each
/// case gets a fresh shared note, so cases that change the share cannot disturb each other.
/// "ok" means the operation succeeded; otherwise the expected `serverErrorCode` (for the whole
/// request, or for the one item it carries). `listed`/`absent` say whether the zone is in the
/// caller's shared database.
@Suite("Authorization matrix")
struct AuthorizationMatrixTests {
    enum Role: String, CaseIterable, CustomStringConvertible {
        case owner, administrator, readWrite, readOnly, publicUser, invited, removed, stranger, anonymous
        var description: String { rawValue }
    }

    enum Endpoint: String, CaseIterable, CustomStringConvertible {
        case resolve, accept, sharedZones, lookup, query, update, create, delete, deleteRoot
        case addParticipant, changePublicPermission, leaveShare, requestAccess, approveRequesters
        /// POST /tandem/1/{container}/{environment}/shares/invitations and shares/declineInvitation (A33).
        case invitations, declineInvitation
        /// POST /device/1/{container}/{environment}/tokens/create, as CloudKit JS registers for pushes.
        case pushToken
        /// assets/rereference of the shared `child` (its `title` holds no asset: a reader learns
        /// BAD_REQUEST, anyone else NOT_FOUND, so existence does not leak).
        case rereference
        /// subscriptions/modify of a query subscription in the public database, then
        /// subscriptions/list there shows it (decision J12: any signed-in user; it is theirs).
        case publicSubscription
        /// POST …/public/users/lookup/contacts: always no users (Tandem keeps no contacts).
        case contactsLookup
        /// The share page `/share/{shortGUID}` with the caller's session cookie (C12–C16): what it
        /// offers (`manage`, `leave`, `accept`, `request`, `unavailable`, `signin`), and its forms;
        /// a POST's outcome is `ok` (303 back), `signin` (303 to the sign-in page), or the
        /// service's code shown beside the form. `pageNoCSRF` is the invite form without its field.
        case sharePage, pageAccept, pageDecline, pageRequest, pageLeave, pageInvite, pagePublicLink, pageApprove, pageStop, pageNoCSRF
        /// conversations/messages/send of the share's URL with `"shareMode": "collaborate"` into a
        /// new group with the newcomer (R1, R2): "ok" only when the newcomer is now invited.
        case collaborateSend
        /// GET /share/{shortGUID}/thumbnail with the caller's page cookie, after the owner gave the
        /// share a thumbnail (R5): whoever the page shows the title to.
        case pageThumbnail
        /// activities/invitations/{create,lookup,revoke} (R19–R21) for a group conversation of the
        /// owner and the administrator: only members make one; a lookup shows members everything
        /// ("member") and anyone else the fallback only ("fallback"); only the creator (the
        /// owner) revokes, everyone else hears NOT_FOUND.
        case invitationCreate, invitationLookup, invitationRevoke
        var description: String { rawValue }
    }

    static let auth = "AUTHENTICATION_REQUIRED"
    static let zone = "ZONE_NOT_FOUND"
    static let denied = "ACCESS_DENIED"
    static let hidden = "NOT_FOUND"
    static let invited = "PARTICIPANT_ALREADY_INVITED"

    /// Expected outcome per endpoint, in `Role.allCases` order:
    /// owner, administrator, readWrite, readOnly, publicUser, invited, removed, stranger, anonymous.
    static let expected: [Endpoint: [String]] = [
        .resolve:                ["ok", "ok", "ok", "ok", "ok", "ok", hidden, hidden, auth],
        .accept:                 ["ok", "ok", "ok", "ok", "ok", "ok", hidden, hidden, auth],
        .sharedZones:            ["absent", "listed", "listed", "listed", "listed", "absent", "absent", "absent", auth],
        .lookup:                 ["ok", "ok", "ok", "ok", "ok", zone, zone, zone, auth],
        .query:                  ["ok", "ok", "ok", "ok", "ok", zone, zone, zone, auth],
        .update:                 ["ok", "ok", "ok", denied, denied, zone, zone, zone, auth],
        .create:                 ["ok", "ok", "ok", denied, denied, zone, zone, zone, auth],
        .delete:                 ["ok", "ok", "ok", denied, denied, zone, zone, zone, auth],
        .deleteRoot:             ["ok", denied, denied, denied, denied, zone, zone, zone, auth],
        .addParticipant:         ["ok", "ok", denied, denied, denied, zone, zone, zone, auth],
        .changePublicPermission: ["ok", denied, denied, denied, denied, zone, zone, zone, auth],
        .leaveShare:             ["ok", "ok", "ok", "ok", "ok", zone, zone, zone, auth],
        .requestAccess:          ["BAD_REQUEST", invited, invited, invited, invited, invited, "ok", "ok", auth],
        .approveRequesters:      ["ok", "ok", denied, denied, denied, hidden, hidden, hidden, auth],
        .pushToken:              ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", auth],
        .rereference:            ["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", hidden, hidden, hidden, auth],
        .invitations:            ["absent", "absent", "absent", "absent", "absent", "listed", "absent", "absent", auth],
        .declineInvitation:      ["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "ok", hidden, hidden, auth],
        .publicSubscription:     ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", auth],
        .contactsLookup:         ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", auth],
        .sharePage:              ["manage", "manage", "leave", "leave", "leave", "accept", "unavailable", "unavailable", "signin"],
        .pageAccept:             ["ok", "ok", "ok", "ok", "ok", "ok", hidden, hidden, "signin"],
        .pageDecline:            ["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "ok", hidden, hidden, "signin"],
        .pageRequest:            ["BAD_REQUEST", invited, invited, invited, invited, invited, "ok", "ok", "signin"],
        .pageLeave:              ["BAD_REQUEST", "ok", "ok", "ok", "ok", zone, zone, zone, "signin"],
        .pageInvite:             ["ok", "ok", denied, denied, denied, zone, zone, zone, "signin"],
        .pagePublicLink:         ["ok", denied, denied, denied, denied, zone, zone, zone, "signin"],
        .pageApprove:            ["ok", "ok", denied, denied, denied, hidden, hidden, hidden, "signin"],
        .pageStop:               ["ok", denied, denied, denied, denied, denied, denied, denied, "signin"],
        .pageNoCSRF:             ["HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "signin"],
        .collaborateSend:        ["ok", "ok", denied, denied, denied, denied, denied, denied, auth],
        .pageThumbnail:          ["ok", "ok", "ok", "ok", "ok", "ok", "HTTP 404", "HTTP 404", "HTTP 404"],
        .invitationCreate:       ["ok", "ok", hidden, hidden, hidden, hidden, hidden, hidden, auth],
        .invitationLookup:       ["member", "member", "fallback", "fallback", "fallback", "fallback", "fallback", "fallback", auth],
        .invitationRevoke:       ["ok", hidden, hidden, hidden, hidden, hidden, hidden, hidden, auth],
    ]

    /// The people, made once: the same accounts take each role in every fresh world.
    final class Cast: @unchecked Sendable {
        let owner, administrator, readWrite, readOnly, publicUser, invited, removed, stranger, newcomer, requester: Person

        init(_ server: TestServer) throws {
            owner = try server.person("owner")
            administrator = try server.person("admin")
            readWrite = try server.person("writer")
            readOnly = try server.person("reader")
            publicUser = try server.person("public")
            invited = try server.person("invited")
            removed = try server.person("removed")
            stranger = try server.person("stranger")
            newcomer = try server.person("newcomer")
            requester = try server.person("requester")
        }

        func person(_ role: Role) -> Person? {
            switch role {
            case .owner: owner
            case .administrator: administrator
            case .readWrite: readWrite
            case .readOnly: readOnly
            case .publicUser: publicUser
            case .invited: invited
            case .removed: removed
            case .stranger: stranger
            case .anonymous: nil
            }
        }
    }

    nonisolated(unsafe) static var cast: Cast?
    static let lock = NSLock()

    static func sharedCast(_ server: TestServer) throws -> Cast {
        lock.lock()
        defer { lock.unlock() }
        if let cast { return cast }
        let made = try Cast(server)
        cast = made
        return made
    }

    /// A fresh world: a private share with an administrator, a writer, a reader, an invitee and a
    /// removed participant; or, for the public user, a public READ_ONLY share they joined.
    static func world(_ server: TestServer, _ cast: Cast, role: Role, allowsRequests: Bool) throws -> SharedNote {
        let extra: JSONObject = allowsRequests ? ["allowsAccessRequests": true] : [:]
        if role == .publicUser {
            let note = try server.shareNote(owner: cast.owner, publicPermission: "READ_ONLY", extraShareKeys: extra)
            try server.accept(note, as: cast.publicUser)
            return note
        }
        let note = try server.shareNote(owner: cast.owner, participants: [
            Invite.email(cast.administrator, "READ_WRITE", type: "ADMINISTRATOR"), Invite.email(cast.readWrite, "READ_WRITE"),
            Invite.email(cast.readOnly), Invite.email(cast.invited), Invite.email(cast.removed),
        ], extraShareKeys: extra)
        for person in [cast.administrator, cast.readWrite, cast.readOnly, cast.removed] { try server.accept(note, as: person) }
        let share = try server.shareRecord(note, as: cast.owner)
        let kept = [Invite.email(cast.administrator, "READ_WRITE", type: "ADMINISTRATOR"), Invite.email(cast.readWrite, "READ_WRITE"),
                    Invite.email(cast.readOnly), Invite.email(cast.invited)]
        let removal = try server.ownerModify(note, [Body.operation("update", name: note.shareName, recordType: nil,
                                                                   tag: share["recordChangeTag"]?.stringValue, extra: ["participants": .array(kept)])])
        guard removal.json.record(0).serverErrorCode == nil else { throw TestFailure("removal: \(removal.text)") }
        return note
    }

    /// The outcome of a response: the whole-request error, the first item's error, or "ok".
    static func outcome(_ response: TestServer.Response, itemsKey: String = "records") -> String {
        if let code = response.json.serverErrorCode { return code }
        if let first = response.json[itemsKey]?.arrayValue?.first, let code = first.serverErrorCode { return code }
        return response.status == 200 ? "ok" : "HTTP \(response.status)"
    }

    @Test("endpoint × role", arguments: Endpoint.allCases, Role.allCases)
    func matrix(endpoint: Endpoint, role: Role) throws {
        let server = try Shared.server
        let cast = try Self.sharedCast(server)
        let needsRequests = [.requestAccess, .approveRequesters, .pageRequest, .pageApprove].contains(endpoint)
        let note = try Self.world(server, cast, role: role, allowsRequests: needsRequests)
        let caller = cast.person(role)
        let isOwner = role == .owner
        if endpoint == .approveRequesters || endpoint == .pageApprove {
            let asked = try server.tandem("shares/requestAccess", ["shortGUIDs": [["value": .string(note.guid)]]], as: cast.requester)
            guard asked.json["results"]?.arrayValue?.first?["status"] == "REQUESTED" else { throw TestFailure("request: \(asked.text)") }
        }
        /// records/modify as the caller: the owner in their private database, others in the shared one.
        func modify(_ operations: [JSONValue]) throws -> TestServer.Response {
            isOwner ? try server.ownerModify(note, operations) : try server.sharedModify(note, operations, as: caller)
        }
        /// The caller's view of a record's change tag (a placeholder when they cannot see it).
        func tag(_ name: String) throws -> String {
            guard let caller else { return "0-0" }
            let response = isOwner ? try server.post("records/lookup", Body.lookup([name], zone: note.zone), as: caller, database: "private")
                : try server.sharedLookup(note, [name], as: caller)
            return response.json.record(0)["recordChangeTag"]?.stringValue ?? "0-0"
        }
        let result: String
        switch endpoint {
        case .resolve:
            result = Self.outcome(try server.resolve(note, as: caller), itemsKey: "results")
        case .accept:
            let response = try server.post("records/accept", ["shortGUIDs": [["value": .string(note.guid)]]], as: caller, database: "public")
            result = Self.outcome(response, itemsKey: "results")
        case .sharedZones:
            let response = try server.get("zones/list", token: .some(caller?.token), database: "shared")
            if let code = response.json.serverErrorCode {
                result = code
            } else {
                let zones = (response.json["zones"]?.arrayValue ?? []).compactMap { $0["zoneID"]?["zoneName"]?.stringValue }
                result = zones.contains(note.zone) ? "listed" : "absent"
            }
        case .lookup:
            result = Self.outcome(isOwner ? try server.post("records/lookup", Body.lookup(["child"], zone: note.zone), as: caller, database: "private")
                                  : try server.sharedLookup(note, ["child"], as: caller))
        case .query:
            var body: JSONObject = ["query": ["recordType": "Note"]]
            body["zoneID"] = isOwner ? ["zoneName": .string(note.zone)] : note.sharedZoneID
            let response = try server.post("records/query", .object(body), as: caller, database: isOwner ? "private" : "shared")
            let count = response.json.records.count
            result = response.json.serverErrorCode ?? (count == 2 ? "ok" : "saw \(count) records")
        case .update:
            result = Self.outcome(try modify([Body.operation("update", name: "child", recordType: nil, tag: try tag("child"),
                                                             fields: ["title": Body.field("Changed")])]))
        case .create:
            result = Self.outcome(try modify([Body.operation("create", name: unique("new"), fields: [:], extra: ["parent": ["recordName": "note"]])]))
        case .delete:
            result = Self.outcome(try modify([Body.operation("delete", name: "child", recordType: nil, tag: try tag("child"))]))
        case .deleteRoot:
            result = Self.outcome(try modify([Body.operation("delete", name: "note", recordType: nil, tag: try tag("note"))]))
        case .addParticipant:
            var people = [Invite.email(cast.newcomer)]
            if let caller {
                let share = try isOwner || role == .administrator ? server.shareRecord(note, as: caller) : JSONValue.null
                for participant in share["participants"]?.arrayValue ?? [] where participant["type"] != "OWNER" {
                    people.append(["participantId": participant["participantId"] ?? .null, "permission": participant["permission"] ?? .null])
                }
            }
            result = Self.outcome(try modify([Body.operation("update", name: note.shareName, recordType: nil, tag: try tag(note.shareName),
                                                             extra: ["participants": .array(people)])]))
        case .changePublicPermission:
            result = Self.outcome(try modify([Body.operation("update", name: note.shareName, recordType: nil, tag: try tag(note.shareName),
                                                             extra: ["publicPermission": role == .publicUser ? "READ_WRITE" : "READ_ONLY"])]))
        case .leaveShare:
            result = Self.outcome(try modify([Body.operation("delete", name: note.shareName, recordType: nil, tag: try tag(note.shareName))]))
        case .rereference:
            let body: JSONValue = ["assets": [["recordName": "child", "fieldName": "title"]],
                                   "zoneID": isOwner ? ["zoneName": .string(note.zone)] : note.sharedZoneID, "targetZoneID": ["zoneName": "_defaultZone"]]
            result = Self.outcome(try server.post("assets/rereference", body, as: caller, database: isOwner ? "private" : "shared"),
                                  itemsKey: "assets")
        case .publicSubscription:
            let id = unique("sub")
            let subscription: JSONValue = ["subscriptionID": .string(id), "subscriptionType": "query",
                                           "query": ["recordType": "Note"], "firesOn": ["create"]]
            let created = try server.post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": subscription]]],
                                          as: caller, database: "public")
            let outcome = Self.outcome(created, itemsKey: "subscriptions")
            if outcome == "ok", let caller {
                let listed = try server.get("subscriptions/list", token: .some(caller.token), database: "public")
                let ids = (listed.json["subscriptions"]?.arrayValue ?? []).compactMap { $0["subscriptionID"]?.stringValue }
                result = ids.contains(id) ? "ok" : "not listed: \(listed.text)"
            } else {
                result = outcome
            }
        case .contactsLookup:
            let response = try server.post("users/lookup/contacts", ["contacts": [["emailAddresses": [.string(cast.owner.email)]]]],
                                           as: caller, database: "public")
            let outcome = Self.outcome(response)
            result = outcome == "ok" && response.json["users"]?.arrayValue?.isEmpty != true ? "users: \(response.text)" : outcome
        case .requestAccess:
            result = Self.outcome(try server.tandem("shares/requestAccess", ["shortGUIDs": [["value": .string(note.guid)]]], as: caller),
                                  itemsKey: "results")
        case .approveRequesters:
            result = Self.outcome(try server.tandem("shares/approveRequesters", ["shortGUID": .string(note.guid),
                                                                                 "userRecordNames": [.string(cast.requester.recordName)]], as: caller))
        case .invitations:
            let response = try server.tandem("shares/invitations", [:], as: caller)
            if let code = response.json.serverErrorCode {
                result = code
            } else {
                let guids = (response.json["invitations"]?.arrayValue ?? []).compactMap { $0["shortGUID"]?.stringValue }
                result = guids.contains(note.guid) ? "listed" : "absent"
            }
        case .declineInvitation:
            result = Self.outcome(try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(note.guid)]]], as: caller),
                                  itemsKey: "results")
        case .pushToken:
            let url = "\(server.baseURL)/device/1/\(TestServer.container)/development/tokens/create"
            let response = try server.request("POST", url, body: Data(#"{"apnsEnvironment":"development"}"#.utf8), token: .some(caller?.token))
            let outcome = Self.outcome(response)
            result = outcome == "ok" && response.json["webcourierURL"] == nil ? "no webcourierURL" : outcome
        case .sharePage, .pageAccept, .pageDecline, .pageRequest, .pageLeave, .pageInvite, .pagePublicLink, .pageApprove, .pageStop, .pageNoCSRF:
            result = try Self.sharePageOutcome(endpoint, server: server, note: note, caller: caller, cast: cast)
        case .collaborateSend:
            result = try Self.collaborateOutcome(server: server, note: note, caller: caller, cast: cast)
        case .invitationCreate, .invitationLookup, .invitationRevoke:
            result = try Self.invitationOutcome(endpoint, server: server, caller: caller, cast: cast)
        case .pageThumbnail:
            let share = try server.shareRecord(note, as: cast.owner)
            let thumbnail = Body.field(.string(Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3]).base64EncodedString()), "BYTES")
            let saved = try server.ownerModify(note, [Body.operation("update", name: note.shareName, recordType: nil, tag: share["recordChangeTag"]?.stringValue,
                                                                     fields: ["cloudkit.thumbnailImageData": thumbnail])])
            guard saved.json.record(0).serverErrorCode == nil else { throw TestFailure("thumbnail: \(saved.text)") }
            let reply = try SharePageVisit(server: server, guid: note.guid, token: caller?.token).thumbnail()
            result = reply.status == 200 && reply.body.contains("PNG") ? "ok" : "HTTP \(reply.status ?? 0)"
        }
        let want = Self.expected[endpoint]![Role.allCases.firstIndex(of: role)!]
        #expect(result == want, "\(endpoint) as \(role)")
    }

    /// *Collaborate* with the share's URL, as `caller`, in a new group of theirs with the newcomer;
    /// whether the newcomer is invited afterwards is checked either way (a refusal writes nothing).
    static func collaborateOutcome(server: TestServer, note: SharedNote, caller: Person?, cast: Cast) throws -> String {
        let url = JSONValue.string("join \(server.baseURL)/share/\(note.guid)")
        guard let caller else {
            return outcome(try server.tandem("conversations/messages/send", ["conversation": "any", "text": url, "shareMode": "collaborate"], as: nil))
        }
        let chat = try server.tandem("conversations/create", ["members": [.string(cast.newcomer.recordName)], "group": true], as: caller)
        guard let id = chat.json["conversationID"]?.stringValue else { throw TestFailure("create: \(chat.text)") }
        let sent = outcome(try server.tandem("conversations/messages/send", ["conversation": .string(id), "text": url, "shareMode": "collaborate"],
                                             as: caller))
        let share = try server.shareRecord(note, as: cast.owner)
        let invited = share["participants"]?.arrayValue?.contains {
            $0["userIdentity"]?["userRecordName"]?.stringValue == cast.newcomer.recordName && $0["acceptanceStatus"] == "INVITED"
        } ?? false
        if sent == "ok" { return invited ? "ok" : "not invited: \(share)" }
        return invited ? "invited despite \(sent)" : sent
    }

    /// An activity invitation's operation as `caller`, in a fresh group conversation of the owner
    /// and the administrator; for lookup and revoke, of an invitation the owner made there.
    static func invitationOutcome(_ endpoint: Endpoint, server: TestServer, caller: Person?, cast: Cast) throws -> String {
        let chat = try server.tandem("conversations/create", ["members": [.string(cast.administrator.recordName)], "group": true], as: cast.owner)
        guard let id = chat.json["conversationID"]?.stringValue else { throw TestFailure("create: \(chat.text)") }
        let activity: JSONValue = ["identifier": "com.example.sketch", "payload": "{}",
                                   "metadata": ["title": "Secret sketch", "fallbackURL": "https://example.com/sketch"]]
        if endpoint == .invitationCreate {
            return outcome(try server.tandem("activities/invitations/create", ["conversationID": .string(id), "activity": activity], as: caller))
        }
        let made = try server.tandem("activities/invitations/create", ["conversationID": .string(id), "activity": activity], as: cast.owner)
        guard let url = made.json["url"]?.stringValue, let invitationID = made.json["invitationID"]?.stringValue else {
            throw TestFailure("invitation: \(made.text)")
        }
        if endpoint == .invitationRevoke {
            return outcome(try server.tandem("activities/invitations/revoke", ["invitationID": .string(invitationID)], as: caller))
        }
        let seen = try server.tandem("activities/invitations/lookup", ["invitation": .string(url)], as: caller)
        guard outcome(seen) == "ok" else { return outcome(seen) }
        let metadata = seen.json["activity"]?["metadata"]
        let canJoin = seen.json["canJoin"]?.boolValue
        if canJoin == true, metadata?["title"]?.stringValue == "Secret sketch", seen.json["conversationID"]?.stringValue == id { return "member" }
        if canJoin == false, metadata?["title"] == nil, seen.json["conversationID"] == nil, seen.json["creator"] == nil,
           metadata?["fallbackURL"]?.stringValue == "https://example.com/sketch" {
            return "fallback"
        }
        return "unexpected: \(seen.text)"
    }

    /// The share page as `caller` (their token in the page's session cookie; signed out without one).
    static func sharePageOutcome(_ endpoint: Endpoint, server: TestServer, note: SharedNote, caller: Person?, cast: Cast) throws -> String {
        var page = SharePageVisit(server: server, guid: note.guid, token: caller?.token)
        let shown = try page.open()
        if caller == nil { page.csrf = String(repeating: "0", count: 64) }  // signed out: no form; the session is checked first
        switch endpoint {
        case .sharePage:
            for (id, view) in [("invite", "manage"), ("leave", "leave"), ("accept", "accept"), ("request", "request"),
                               ("signin", "signin"), ("unavailable", "unavailable")] where shown.body.contains("id=\"\(id)\"") {
                return view
            }
            return "HTTP \(shown.status ?? 0): \(shown.body)"
        case .pageAccept: return SharePageVisit.outcome(try page.post("accept", [:]))
        case .pageDecline: return SharePageVisit.outcome(try page.post("decline", [:]))
        case .pageRequest: return SharePageVisit.outcome(try page.post("request", [:]))
        case .pageLeave: return SharePageVisit.outcome(try page.post("leave", [:]))
        case .pageInvite: return SharePageVisit.outcome(try page.post("invite", ["email": cast.newcomer.email, "permission": "READ_ONLY"]))
        case .pagePublicLink: return SharePageVisit.outcome(try page.post("public-link", ["permission": "READ_ONLY"]))
        case .pageApprove: return SharePageVisit.outcome(try page.post("approve", ["user": cast.requester.recordName]))
        case .pageStop: return SharePageVisit.outcome(try page.post("stop", ["confirm": "yes"]))
        case .pageNoCSRF:
            return SharePageVisit.outcome(try page.post("invite", ["email": cast.newcomer.email, "permission": "READ_ONLY"], csrf: .some(nil)))
        default: return "not a share page case"
        }
    }
}
