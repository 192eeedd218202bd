import Foundation
import Testing
import TandemCore
import TandemServer

/// Share invitation emails (A30–A32) sent to a real SMTP server on loopback (aiosmtpd), and the
/// pending invitations list with decline (A33), against the real server.
///
/// "Nothing was sent" is shown without waiting: the mailer sends one message after another, so
/// once a later marker message has arrived, an earlier one would have arrived too.
@Suite("Share invitations")
struct ShareInvitationTests {
    final class World: @unchecked Sendable {
        let sink: SMTPSink
        let server: TestServer
        let app: String

        init(templates: String? = nil) throws {
            sink = try SMTPSink()
            var arguments = TestServer.cheapHash + ["--smtp-url", "smtp://127.0.0.1:\(sink.port)", "--smtp-from", "shares@tandem.example"]
            if let templates { arguments += ["--mail-templates", templates] }
            server = try TestServer(extraArguments: arguments)
            app = try server.apiToken()
        }

        /// Every message to `address` so far.
        func messages(to address: String) -> [String] {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: sink.directory)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
            return names.compactMap { try? String(contentsOfFile: sink.directory + "/" + $0, encoding: .utf8) }
                .filter { $0.contains("X-Envelope-To: \(address)\r\n") }
        }

        /// Invites a fresh address to `note` (keeping `keep`) and waits for its email: after it,
        /// every earlier message has arrived.
        func mark(_ note: SharedNote, keeping keep: [JSONValue]) throws {
            let marker = "\(unique("marker"))@example.com".lowercased()
            try save(note, participants: keep + [Invite.address(marker)])
            _ = try sink.message(to: marker)
        }

        /// Saves the share with `participants` (the complete list) as its owner.
        func save(_ note: SharedNote, participants: [JSONValue], title: String? = nil) throws {
            let share = try server.shareRecord(note, as: note.owner)
            var fields: JSONObject = [:]
            if let title { fields["cloudkit.title"] = Body.field(.string(title)) }
            let response = try server.ownerModify(note, [Body.operation("update", name: note.shareName, recordType: nil,
                                                                        tag: share["recordChangeTag"]?.stringValue, fields: fields,
                                                                        extra: ["participants": .array(participants)])])
            guard response.status == 200, response.json.record(0).serverErrorCode == nil else { throw TestFailure("save: \(response.text)") }
        }
    }

    static let lock = NSLock()
    nonisolated(unsafe) static var shared: World?
    static func world() throws -> World {
        lock.lock()
        defer { lock.unlock() }
        if let shared { return shared }
        let made = try World()
        shared = made
        return made
    }

    @Test func addingAParticipantByEmailMailsTheShareURLTitleAndInviterOnceAfterCommit() throws {
        let world = try Self.world()
        let server = world.server
        let owner = try server.person("owner")
        let invitee = try server.person("invitee")
        let newcomer = "\(unique("newcomer"))@example.com".lowercased()   // no account yet
        let note = try server.shareNote(owner: owner, participants: [Invite.email(invitee), Invite.address(newcomer)])

        let mail = try world.sink.message(to: invitee.email)
        let url = server.baseURL + "/share/" + note.guid
        #expect(mail.contains("From: shares@tandem.example"), "\(mail)")
        #expect(mail.contains(url) && mail.contains("Groceries") && mail.contains("Owner Tester"), "\(mail)")
        #expect(SMTPSink.link(in: mail) == url, "\(mail)")
        let forNewcomer = try world.sink.message(to: newcomer)
        #expect(forNewcomer.contains(url), "an invitee without an account is mailed too: \(forNewcomer)")
        // The subject names the inviter and title; non-ASCII quotes go as RFC 2047 encoded words.
        #expect(mail.contains("Subject: =?utf-8?B?"), "\(mail)")

        // Re-saving the share (a new title, the same people) invites nobody again.
        let keep = [Invite.email(invitee), Invite.address(newcomer)]
        try world.save(note, participants: keep, title: "Groceries for the week")
        try world.mark(note, keeping: keep)
        #expect(world.messages(to: invitee.email).count == 1)
        #expect(world.messages(to: newcomer).count == 1)
    }

    @Test func aPersonWhoTurnedInvitationEmailsOffIsNotMailedButStillInvited() throws {
        let world = try Self.world()
        let server = world.server
        let owner = try server.person("owner")
        let quiet = try server.person("quiet")
        let off = try server.auth("account", ["invitationEmails": false], apiToken: world.app, bearer: quiet.token)
        #expect(off.status == 200 && off.json["invitationEmails"] == false && off.json["userRecordName"]?.stringValue == quiet.recordName,
                "\(off.text)")
        #expect(try server.auth("account", apiToken: world.app, bearer: quiet.token).json["invitationEmails"] == false)
        let bad = try server.auth("account", ["invitationEmails": "no"], apiToken: world.app, bearer: quiet.token)
        #expect(bad.status == 400 && bad.json.serverErrorCode == "BAD_REQUEST", "\(bad.text)")
        let unknown = try server.auth("account", ["email": "x@example.com"], apiToken: world.app, bearer: quiet.token)
        #expect(unknown.json.serverErrorCode == "BAD_REQUEST", "\(unknown.text)")

        let note = try server.shareNote(owner: owner, participants: [Invite.email(quiet)])
        try world.mark(note, keeping: [Invite.email(quiet)])
        #expect(world.messages(to: quiet.email).isEmpty)
        // The invitation itself stands: it is listed for them.
        let listed = try server.tandem("shares/invitations", [:], as: quiet)
        #expect(listed.json["invitations"]?.arrayValue?.contains { $0["shortGUID"]?.stringValue == note.guid } == true, "\(listed.text)")

        // Turned on again, the next invitation is mailed.
        _ = try server.auth("account", ["invitationEmails": true], apiToken: world.app, bearer: quiet.token)
        _ = try server.shareNote(owner: owner, participants: [Invite.email(quiet)])
        #expect(try world.sink.message(to: quiet.email).contains("Groceries"))
    }

    @Test func anInviteeListsDeclinesAndAnotherAcceptsTheirInvitations() throws {
        let world = try Self.world()
        let server = world.server
        let owner = try server.person("owner")
        let decliner = try server.person("decliner")
        let accepter = try server.person("accepter")
        let stranger = try server.person("stranger")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(decliner), Invite.email(accepter, "READ_WRITE")])

        func invitations(_ person: Person) throws -> [JSONValue] {
            let response = try server.tandem("shares/invitations", [:], as: person)
            guard response.status == 200, let list = response.json["invitations"]?.arrayValue else { throw TestFailure("invitations: \(response.text)") }
            return list.filter { $0["shortGUID"]?.stringValue == note.guid }
        }
        let mine = try #require(try invitations(accepter).first)
        #expect(mine["shareURL"]?.stringValue == server.baseURL + "/share/" + note.guid)
        #expect(mine["title"] == "Groceries" && mine["participantPermission"] == "READ_WRITE" && mine["participantStatus"] == "INVITED")
        #expect(mine["ownerIdentity"]?["userRecordName"]?.stringValue == owner.recordName)
        #expect(mine["ownerIdentity"]?["nameComponents"]?["givenName"] != nil, "\(mine)")
        #expect(mine["rootRecordName"] == "note" && mine["zoneID"]?["zoneName"]?.stringValue == note.zone)
        #expect(mine["ownerIdentity"]?["lookupInfo"]?["emailAddress"] == nil, "the owner's email is not shown")
        #expect(try invitations(stranger).isEmpty && invitations(owner).isEmpty)

        // Declining: the owner's zone feed carries the share again, the decliner REMOVED (A44).
        var ownerFeed = ZoneMirror()
        try ownerFeed.catchUp(server, zoneID: ["zoneName": .string(note.zone)], as: owner)
        let declined = try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(note.guid)]]], as: decliner)
        #expect(declined.json["results"]?.arrayValue?.first?["status"] == "DECLINED", "\(declined.text)")
        let before = ownerFeed.pages
        try ownerFeed.catchUp(server, zoneID: ["zoneName": .string(note.zone)], as: owner)
        #expect(ownerFeed.pages > before)
        let share = try #require(ownerFeed.records[note.shareName])
        let people = share["participants"]?.arrayValue ?? []
        #expect(people.first { $0["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue == decliner.email }?["acceptanceStatus"] == "REMOVED",
                "\(share)")
        #expect(people.contains { $0["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue == accepter.email }, "\(share)")
        #expect(try server.sqlite("SELECT status FROM share_participants WHERE email = '\(decliner.email)'") == "REMOVED")
        #expect(try invitations(decliner).isEmpty)
        #expect(try server.resolve(note, as: decliner).json["results"]?.arrayValue?.first?.serverErrorCode == "NOT_FOUND")

        // Declining again, a stranger declining, an unknown token: the same NOT_FOUND.
        for (person, guid) in [(decliner, note.guid), (stranger, note.guid), (decliner, "nosuchshare")] {
            let again = try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(guid)]]], as: person)
            #expect(again.json["results"]?.arrayValue?.first?.serverErrorCode == "NOT_FOUND", "\(again.text)")
        }
        let malformed = try server.tandem("shares/declineInvitation", ["shortGUIDs": "x"], as: decliner)
        #expect(malformed.status == 400 && malformed.json.serverErrorCode == "BAD_REQUEST", "\(malformed.text)")

        // Accepting (records/accept) takes it off the list; an accepted share cannot be declined.
        #expect(try server.accept(note, as: accepter)["participantStatus"] == "ACCEPTED")
        #expect(try invitations(accepter).isEmpty)
        let late = try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(note.guid)]]], as: accepter)
        #expect(late.json["results"]?.arrayValue?.first?.serverErrorCode == "BAD_REQUEST", "\(late.text)")
    }

    /// CloudKit answers an invitation with an acceptance status, so a decline shows: the owner
    /// sees the person `REMOVED` (QA: they vanished from the list). A save that sends the share
    /// back as fetched keeps them so and mails nobody; adding them again by lookupInfo invites
    /// them again (mailed, listed); a save that leaves them out drops them (A44).
    @Test func aDeclinedInviteeShowsAsRemovedUntilTheOwnerInvitesThemAgainOrDropsThem() throws {
        let world = try Self.world()
        let server = world.server
        let owner = try server.person("owner")
        let decliner = try server.person("decliner")
        let keeper = try server.person("keeper")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(decliner), Invite.email(keeper)])
        _ = try world.sink.message(to: decliner.email)
        let declined = try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(note.guid)]]], as: decliner)
        #expect(declined.json["results"]?.arrayValue?.first?["status"] == "DECLINED", "\(declined.text)")

        func people() throws -> [JSONValue] { try server.shareRecord(note, as: owner)["participants"]?.arrayValue ?? [] }
        func status(_ person: Person) throws -> String? {
            try people().first { $0["userIdentity"]?["userRecordName"]?.stringValue == person.recordName }?["acceptanceStatus"]?.stringValue
        }
        let listed = try people()
        #expect(try status(decliner) == "REMOVED" && status(keeper) == "INVITED", "\(listed)")
        // Those who are not managing the share do not see the decline.
        _ = try server.accept(note, as: keeper)
        let seenByKeeper = try server.shareRecord(note, as: keeper)["participants"]?.arrayValue ?? []
        #expect(!seenByKeeper.contains { $0["userIdentity"]?["userRecordName"]?.stringValue == decliner.recordName }, "\(seenByKeeper)")

        // Sent back as fetched (participants by participantId, as the SDK saves a share): unchanged.
        let asFetched: [JSONValue] = try people().filter { $0["type"] != "OWNER" }.map { ["participantId": $0["participantId"] ?? .null] }
        try world.save(note, participants: asFetched, title: "Groceries, again")
        try world.mark(note, keeping: asFetched)
        #expect(try status(decliner) == "REMOVED")
        #expect(world.messages(to: decliner.email).count == 1, "re-saving invites nobody again")

        // Added again by lookupInfo (beside the fetched entry): invited again, mailed, listed.
        let withMarker = try people().filter { $0["type"] != "OWNER" }.map { JSONValue.object(["participantId": $0["participantId"] ?? .null]) }
        try world.save(note, participants: withMarker + [Invite.email(decliner)])
        #expect(try status(decliner) == "INVITED")
        _ = try world.sink.message(to: decliner.email, after: world.messages(to: decliner.email)[0])
        let invitations = try server.tandem("shares/invitations", [:], as: decliner).json["invitations"]?.arrayValue ?? []
        #expect(invitations.contains { $0["shortGUID"]?.stringValue == note.guid })

        // Declined again, then left out of a save: gone from the list.
        _ = try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(note.guid)]]], as: decliner)
        #expect(try status(decliner) == "REMOVED")
        try world.save(note, participants: [Invite.email(keeper)])
        #expect(try status(decliner) == nil)
        #expect(try status(keeper) == "ACCEPTED")
    }

    @Test func anOperatorTemplateReplacesTheInvitationText() throws {
        let directory = NSTemporaryDirectory() + "tandem-templates-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "Subject: {{inviter}} invites you\n\nHello! {{inviter}} shares {{title}} at {{url}}\n"
            .write(toFile: directory + "/invitation.txt", atomically: true, encoding: .utf8)
        try "Subject: Welcome aboard\n\nConfirm here: {{link}}\n".write(toFile: directory + "/signup.txt", atomically: true, encoding: .utf8)
        let world = try World(templates: directory)
        let owner = try world.server.person("owner")
        let invitee = "\(unique("templated"))@example.com".lowercased()
        let note = try world.server.shareNote(owner: owner, participants: [Invite.address(invitee)])
        let mail = try world.sink.message(to: invitee)
        #expect(mail.contains("Subject: Owner Tester invites you"), "\(mail)")
        #expect(mail.contains("Hello! Owner Tester shares Groceries at \(world.server.baseURL)/share/\(note.guid)"), "\(mail)")
        // The sign-up email takes its template too; the link still works.
        let email = "\(unique("welcome"))@example.com".lowercased()
        _ = try world.server.auth("signup", ["email": .string(email), "password": "templated password"], apiToken: world.app)
        let welcome = try world.sink.message(to: email)
        #expect(welcome.contains("Subject: Welcome aboard") && welcome.contains("Confirm here: \(world.server.baseURL)/signin/verify?"), "\(welcome)")
    }

    @Test func aTemplateWithAPlaceholderItsEmailHasNotIsRefusedAtStart() throws {
        let directory = NSTemporaryDirectory() + "tandem-templates-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "Open {{link}}\n".write(toFile: directory + "/invitation.txt", atomically: true, encoding: .utf8)
        #expect(throws: MailTemplates.Problem.self) { try MailTemplates.load(directory: directory) }
        #expect(throws: MailTemplates.Problem.self) { try MailTemplates.load(directory: directory + "/missing") }
        try "Subject: Reset\n\nGo to {{link}}\n".write(toFile: directory + "/invitation.txt", atomically: true, encoding: .utf8)
        #expect(throws: MailTemplates.Problem.self) { try MailTemplates.load(directory: directory) }
        try FileManager.default.removeItem(atPath: directory + "/invitation.txt")
        try "Subject: Reset\n\nGo to {{link}}\n".write(toFile: directory + "/reset.txt", atomically: true, encoding: .utf8)
        #expect(try MailTemplates.load(directory: directory) != MailTemplates())
    }
}
