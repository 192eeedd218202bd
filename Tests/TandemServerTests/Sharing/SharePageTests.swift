import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The share page's management forms over plain HTTP (issue 18; decisions C12–C16): each form
/// acts through the share services as the JSON API does, bad input is shown beside its field
/// and writes nothing, and a form without its CSRF field or session changes nothing.
/// In a browser: `SharePageBrowserTests`.
@Suite struct SharePageTests {
    /// The share's participants as its owner's records/lookup lists them (OWNER left out):
    /// email → "TYPE PERMISSION STATUS".
    static func participants(_ server: TestServer, _ note: SharedNote) throws -> [String: String] {
        var result: [String: String] = [:]
        for participant in try server.shareRecord(note, as: note.owner)["participants"]?.arrayValue ?? [] where participant["type"] != "OWNER" {
            let email = participant["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue ?? "?"
            result[email] = [participant["type"], participant["permission"], participant["acceptanceStatus"]]
                .map { $0?.stringValue ?? "?" }.joined(separator: " ")
        }
        return result
    }

    @Test func theOwnerInvitesByEmailAndTheInviteeAcceptsThenLeavesOnThePage() throws {
        let server = try Shared.server
        let owner = try server.person("owner"), invitee = try server.person("invitee")
        let note = try server.shareNote(owner: owner)
        var page = SharePageVisit(server: server, guid: note.guid, token: owner.token)
        let shown = try page.open()
        #expect(shown.status == 200 && shown.body.contains(#"id="invite""#) && shown.body.contains(#"id="public-link""#)
                && shown.body.contains(#"id="stop""#), "\(shown.text)")
        let invited = try page.post("invite", ["email": invitee.email.uppercased(), "permission": "READ_WRITE"])
        #expect(SharePageVisit.outcome(invited) == "ok", "\(invited.text)")
        #expect(try Self.participants(server, note)[invitee.email] == "USER READ_WRITE INVITED")
        let after = try page.open("done=invite")
        #expect(after.body.contains("Invitation sent.") && after.body.lowercased().contains(invitee.email), "\(after.body)")

        var theirs = SharePageVisit(server: server, guid: note.guid, token: invitee.token)
        let invitation = try theirs.open()
        #expect(invitation.body.contains(#"id="accept""#) && invitation.body.contains(#"id="decline""#), "\(invitation.body)")
        #expect(SharePageVisit.outcome(try theirs.post("accept", [:])) == "ok")
        #expect(try Self.participants(server, note)[invitee.email] == "USER READ_WRITE ACCEPTED")
        let member = try theirs.open()
        #expect(member.body.contains(#"id="leave""#) && !member.body.contains(#"id="invite""#), "\(member.body)")
        #expect(SharePageVisit.outcome(try theirs.post("leave", [:])) == "ok")
        #expect(try Self.participants(server, note)[invitee.email] == nil, "a participant who left is not listed")
    }

    @Test func theOwnerChangesPermissionAndRoleRemovesAndStopsSharing() throws {
        let server = try Shared.server
        let owner = try server.person("owner"), friend = try server.person("friend"), other = try server.person("other")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(friend), Invite.email(other)])
        _ = try server.accept(note, as: friend)
        var page = SharePageVisit(server: server, guid: note.guid, token: owner.token)
        let shown = try page.open()
        let id = try #require(Self.participantID(shown.body, near: friend.email), "\(shown.body)")
        let changed = try page.post("participant", ["participant": id, "permission": "READ_WRITE", "role": "ADMINISTRATOR", "form": "p-0"])
        #expect(SharePageVisit.outcome(changed) == "ok", "\(changed.text)")
        #expect(try Self.participants(server, note)[friend.email] == "ADMINISTRATOR READ_WRITE ACCEPTED")

        let otherID = try #require(Self.participantID(try page.open().body, near: other.email))
        #expect(SharePageVisit.outcome(try page.post("remove", ["participant": otherID])) == "ok")
        #expect(try Self.participants(server, note)[other.email] == nil)

        #expect(SharePageVisit.outcome(try page.post("public-link", ["permission": "READ_ONLY"])) == "ok")
        #expect(try server.shareRecord(note, as: owner)["publicPermission"] == "READ_ONLY")

        let unconfirmed = try page.post("stop", [:])
        #expect(unconfirmed.status == 400 && unconfirmed.body.contains(#"id="field-confirm-error""#), "\(unconfirmed.text)")
        #expect(try server.shareRecord(note, as: owner)["shortGUID"]?.stringValue == note.guid, "an unconfirmed stop changes nothing")
        #expect(SharePageVisit.outcome(try page.post("stop", ["confirm": "yes"])) == "ok")
        #expect(try server.shareRecord(note, as: owner).serverErrorCode == "NOT_FOUND", "the share record is gone")
        #expect(try server.resolve(note, as: friend).json["results"]?.arrayValue?.first?.serverErrorCode == "NOT_FOUND", "the friend lost access")
    }

    /// An administrator manages people but not the link, roles or the share itself (the
    /// service's rules, shown beside the form).
    @Test func anAdministratorInvitesButCannotChangeRolesOrStopSharing() throws {
        let server = try Shared.server
        let owner = try server.person("owner"), admin = try server.person("admin"), reader = try server.person("reader")
        let newcomer = try server.person("newcomer")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(admin, "READ_WRITE", type: "ADMINISTRATOR"), Invite.email(reader)])
        _ = try server.accept(note, as: admin)
        var page = SharePageVisit(server: server, guid: note.guid, token: admin.token)
        let shown = try page.open()
        #expect(shown.body.contains(#"id="invite""#) && shown.body.contains(#"id="leave""#), "\(shown.body)")
        #expect(!shown.body.contains(#"id="public-link""#) && !shown.body.contains(#"id="stop""#), "\(shown.body)")
        #expect(SharePageVisit.outcome(try page.post("invite", ["email": newcomer.email, "permission": "READ_ONLY"])) == "ok")
        #expect(try Self.participants(server, note)[newcomer.email] == "USER READ_ONLY INVITED")
        let id = try #require(Self.participantID(shown.body, near: reader.email))
        let promoted = try page.post("participant", ["participant": id, "permission": "READ_ONLY", "role": "ADMINISTRATOR", "form": "p-1"])
        #expect(SharePageVisit.outcome(promoted) == "ACCESS_DENIED" && promoted.status == 403, "\(promoted.text)")
        #expect(promoted.body.contains(#"id="p-1-error""#) && promoted.body.contains("Only the owner may change a participant&#39;s role."), "\(promoted.body)")
        #expect(SharePageVisit.outcome(try page.post("stop", ["confirm": "yes"])) == "ACCESS_DENIED")
        #expect(SharePageVisit.outcome(try page.post("public-link", ["permission": "READ_WRITE"])) == "ACCESS_DENIED")
        #expect(try server.shareRecord(note, as: owner)["publicPermission"] == "NONE")
    }

    /// Bad input in each form: the reason beside the field, the typed value kept, status 400,
    /// and the share unchanged.
    @Test(arguments: [
        ("invite", ["email": "", "permission": "READ_ONLY"], "field-email-error"),
        ("invite", ["email": "not-an-email", "permission": "READ_ONLY"], "field-email-error"),
        ("invite", ["email": "two@@example.com", "permission": "READ_ONLY"], "field-email-error"),
        ("invite", ["email": "a b@example.com", "permission": "READ_ONLY"], "field-email-error"),
        ("invite", ["email": "x@localhost", "permission": "READ_ONLY"], "field-email-error"),
        ("invite", ["email": String(repeating: "a", count: 250) + "@example.com", "permission": "READ_ONLY"], "field-email-error"),
        ("invite", ["email": "good@example.com", "permission": "OWNER"], "invite-error"),
        ("public-link", ["permission": "EVERYONE"], "field-public-permission-error"),
        ("participant", ["participant": "", "permission": "READ_ONLY"], "participant-error"),
        ("remove", ["participant": "no-such-participant"], "remove-error"),
        ("stop", [:], "field-confirm-error"),
    ])
    func badInputIsShownBesideItsFieldAndNothingIsSaved(action: String, fields: [String: String], errorID: String) throws {
        let server = try Shared.server
        let owner = try server.person("owner"), friend = try server.person("friend")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(friend)])
        let before = try server.shareRecord(note, as: owner)
        var page = SharePageVisit(server: server, guid: note.guid, token: owner.token)
        try page.open()
        let reply = try page.post(action, fields)
        #expect([400, 404].contains(reply.status ?? 0), "\(action) \(fields): \(reply.text)")
        #expect(reply.body.contains("id=\"\(errorID)\""), "\(action) \(fields): \(reply.body)")
        if action == "invite", let typed = fields["email"], !typed.isEmpty {
            #expect(reply.body.contains("value=\"\(typed)\""), "the typed address is kept")
        }
        let after = try server.shareRecord(note, as: owner)
        #expect(after["recordChangeTag"] == before["recordChangeTag"], "\(action): the share record was not written")
        #expect(after["participants"] == before["participants"] && after["publicPermission"] == before["publicPermission"])
    }

    /// CSRF (C4's mechanism at `/share`): a form without its field, with another field, without
    /// the cookie, or sent by another site (C63) is 403 and changes nothing; signed out it goes
    /// to the sign-in page.
    @Test func aFormWithoutItsCSRFFieldOrSessionChangesNothing() throws {
        let server = try Shared.server
        let owner = try server.person("owner"), friend = try server.person("friend")
        let note = try server.shareNote(owner: owner)
        var page = SharePageVisit(server: server, guid: note.guid, token: owner.token)
        try page.open()
        let fields = ["email": friend.email, "permission": "READ_ONLY"]
        #expect(try page.post("invite", fields, csrf: .some(nil)).status == 403)
        #expect(try page.post("invite", fields, csrf: .some(String(repeating: "0", count: 64))).status == 403)
        var cookieless = page
        cookieless.csrfCookie = nil
        #expect(try cookieless.post("invite", fields).status == 403)
        var signedOut = page
        signedOut.token = nil
        let refused = try signedOut.post("invite", fields)
        #expect(refused.status == 303 && refused.header("location") == "/signin?return=%2Fshare%2F\(note.guid)", "\(refused.text)")
        var revoked = page
        revoked.token = "tdu_" + String(repeating: "x", count: 43)
        #expect(SharePageVisit.outcome(try revoked.post("invite", fields)) == "signin")
        // The browser says another site sent it (a sibling site may have planted the CSRF cookie, C63).
        for site in ["cross-site", "same-site"] {
            var elsewhere = page
            elsewhere.headers = ["Sec-Fetch-Site: \(site)"]
            #expect(try elsewhere.post("invite", fields).status == 403, "\(site)")
        }
        #expect(try Self.participants(server, note).isEmpty, "nobody was invited")
    }

    /// The page's headers: a strict CSP, no inline script, no token in the page or storage.
    @Test func thePageHasAStrictPolicyAndNoInlineScript() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        for token in [owner.token, nil] {
            var page = SharePageVisit(server: server, guid: note.guid, token: token)
            let reply = try page.open()
            let csp = try #require(reply.header("content-security-policy"))
            #expect(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline") && csp.contains("frame-ancestors 'none'"), "\(csp)")
            #expect(reply.header("referrer-policy") == "no-referrer" && reply.header("cache-control") == "no-store")
            let scripts = reply.body.components(separatedBy: "<script").dropFirst()
            #expect(scripts.count == 1 && scripts.allSatisfy { $0.hasPrefix(#" src="/share/share.js""#) }, "\(reply.body)")
            #expect(!reply.body.contains("localStorage") && !reply.body.contains("style=")
                    && reply.body.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "no inline code")
            if let token { #expect(!reply.body.contains(token), "the page never holds the session token") }
        }
        let script = try server.request("GET", server.baseURL + "/share/share.js", token: .some(nil))
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
    }

    /// What a sharer or visitor types reaches the page escaped, in text and in attributes: the
    /// share's title (heading, `<title>`, `og:title`) and a refused invitation's email, shown
    /// again in its field. A quote followed by a combining mark (`"\u{301}`, one Swift
    /// Character) still ends a browser's attribute value, so it is escaped too.
    @Test func markupInATitleOrAFormValueIsEscapedEvenBeforeACombiningMark() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner, publicPermission: "READ_ONLY",
                                        title: "<b>Title</b>\"\u{301} data-injected=\"1")
        for token in [owner.token, nil] {
            var page = SharePageVisit(server: server, guid: note.guid, token: token)
            let body = try page.open().body
            #expect(!body.contains("<b>Title</b>") && !body.contains("data-injected=\"1"), "\(body)")
            #expect(body.contains("<meta property=\"og:title\" content=\"&lt;b&gt;Title&lt;/b&gt;&quot;\u{301} data-injected=&quot;1\">"), "\(body)")
        }
        var page = SharePageVisit(server: server, guid: note.guid, token: owner.token)
        try page.open()
        let refused = try page.post("invite", ["email": "x\"\u{301} data-injected=\"2", "permission": "READ_ONLY"])
        #expect(refused.status == 400 && refused.body.contains("aria-invalid"), "\(refused.text)")
        #expect(!refused.body.contains("data-injected=\"2") && refused.body.contains("value=\"x&quot;\u{301} data-injected=&quot;2\""), "\(refused.body)")
    }

    /// The participant ID in the row that names `email`.
    static func participantID(_ html: String, near email: String) -> String? {
        guard let row = html.components(separatedBy: "<tr>").first(where: { $0.contains(email) }),
              let range = row.range(of: #"name="participant" value=""#) else { return nil }
        return String(row[range.upperBound...].prefix { $0 != "\"" })
    }
}
