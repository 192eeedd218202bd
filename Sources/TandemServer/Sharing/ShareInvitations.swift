import TandemCore
import TandemStore

/// Share invitation emails (issue 16 item 5; decisions A30, A31): when a share save adds a
/// participant who has an email address, the invitee is sent the share URL, the share's title and
/// the inviter's name through the accounts mailer, after the save commits. Once per added
/// participant: a re-save that keeps them sends nothing; removing and adding them again invites
/// again. Nobody is mailed who turned invitation emails off; an invitee without an account is.
struct ShareInvitations: Sendable {
    let accounts: AccountService

    /// A participant a `records/modify` request added, noted by the share code.
    struct Added {
        var share: StoredShare
        var participant: StoredParticipant
    }

    /// The title a person sees: the share record's `cloudkit.title`, else "Shared item" (as the
    /// landing page says).
    static func title(_ reader: any StoreReading, _ share: StoredShare) throws -> String {
        if case .string(let text)? = try reader.record(zone: share.zone, name: share.recordName)?.fields["cloudkit.title"], !text.isEmpty {
            return text
        }
        return "Shared item"
    }

    /// How the inviter is named: their display name, given and family names, email, or "Someone".
    static func name(_ reader: any StoreReading, of user: String) throws -> String {
        if let name = try reader.profile(user: user)?.displayName, !name.isEmpty { return name }
        let account = try reader.user(matching: UserIdentity(userRecordName: user))
        let names = [account?.givenName, account?.familyName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        return names.isEmpty ? account?.email ?? "Someone" : names
    }

    /// The emails for `added`, read inside the save's transaction (after its last write).
    /// `baseURL` is the trusted base for emailed links (`RequestScope.mailBaseURL`); without one
    /// nobody is mailed and the server says once why (A38, A45): a share URL built from a forged
    /// Host would send the invitee to another server.
    func compose(_ reader: any StoreReading, _ added: [Added], inviter: String, baseURL: String?) throws -> [AccountMail] {
        guard let baseURL else {
            if added.contains(where: { $0.participant.status == .pending && $0.participant.email != nil }) { accounts.untrustedHost() }
            return []
        }
        var mails: [AccountMail] = []
        var inviterName: String?
        for item in added where item.participant.status == .pending {
            guard let email = item.participant.email, EmailAddresses.isValid(email) else { continue }
            var invitee = item.participant.userRecordName
            if invitee == nil { invitee = try reader.user(matching: UserIdentity(emailAddress: email))?.recordName }
            if let invitee, try !reader.invitationEmails(user: invitee) { continue }
            let who = try inviterName ?? Self.name(reader, of: inviter)
            inviterName = who
            let title = try Self.title(reader, item.share)
            let url = SharePresenter.url(base: baseURL, shortGUID: item.share.shortGUID)
            let mail = AccountMail.invitation(to: email, inviter: who, title: title, url: url)
            mails.append(accounts.settings.mailTemplates.apply(.invitation, to: mail, ["inviter": who, "title": title, "url": url]))
        }
        return mails
    }

    /// Queues the emails (without SMTP, the server says once that none is sent).
    func send(_ mails: [AccountMail]) {
        mails.forEach(accounts.send)
    }
}
