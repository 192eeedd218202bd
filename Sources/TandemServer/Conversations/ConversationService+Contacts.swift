import Foundation
public import TandemCore
public import TandemStore

extension ConversationService {
    /// Contacts per user: at most this many.
    public static let contactLimit = 5_000

    /// The caller's contacts: handles (user record names, emails, phone numbers) with the
    /// account each names, when one exists. D22 reads them.
    public func contacts(owner: String) throws -> [StoredContact] {
        try store.read { try $0.contacts(owner: owner) }
    }

    /// Adds and removes contacts of `owner`. A handle is resolved to an account when added
    /// (a handle without an account is kept, and never matches anyone).
    /// - Throws: `BAD_REQUEST` for an empty handle or one over 256 characters; `LIMIT_EXCEEDED`
    ///   past `contactLimit`.
    public func modifyContacts(owner: String, add: [String], remove: [String]) throws -> [StoredContact] {
        let hub = self.hub
        return try store.write({ tx -> ([StoredContact], ConversationHub.Effects) in
            for handle in remove { _ = try tx.removeContact(owner: owner, handle: handle.trimmingCharacters(in: .whitespaces)) }
            for handle in add {
                let trimmed = handle.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty, trimmed.count <= 256 else { throw CloudKitError.badRequest("a contact handle is 1 to 256 characters") }
                let user = try? Self.resolve(tx, trimmed)
                try tx.putContact(owner: owner, StoredContact(handle: trimmed, userRecordName: user))
            }
            let contacts = try tx.contacts(owner: owner)
            guard contacts.count <= Self.contactLimit else {
                throw CloudKitError(.limitExceeded, "at most \(Self.contactLimit) contacts")
            }
            var effects = ConversationHub.Effects(container: "", environment: .development)
            effects.highlightViewers = [owner]
            return (contacts, effects)
        }, afterCommit: { hub.publish($0.1) }).0
    }

    /// The caller's consent switches (absent ones are on).
    public func consent(viewer: String) throws -> [StoredConsent] {
        try store.read { try $0.consent(viewer: viewer) }
    }

    /// Turns Shared with You on or off for the caller: globally (`target` ignored), for an app
    /// (`target` = `TEAMID.bundle.id`) or for a conversation they are in (`target` = its ID).
    /// Pinned links stay highlights when a conversation is off (spec §1.1).
    /// - Throws: `BAD_REQUEST` for a malformed app ID or missing target; `NOT_FOUND` for a
    ///   conversation the caller is not in, or one of another container or environment than `place`.
    public func setConsent(viewer: String, scope: StoredConsent.Scope, target: String?, allowed: Bool, in place: Place) throws {
        var key = ""
        switch scope {
        case .global: break
        case .app:
            guard let target else { throw CloudKitError.badRequest("send the app ID as target") }
            try LinkService.validate(appID: target)
            key = target
        case .conversation:
            guard let target else { throw CloudKitError.badRequest("send the conversation ID as target") }
            key = target
        }
        let hub = self.hub
        let consentKey = key
        try store.write({ tx -> ConversationHub.Effects in
            if scope == .conversation { _ = try Self.requireMember(tx, conversation: consentKey, user: viewer, in: place) }
            try tx.setConsent(viewer: viewer, StoredConsent(scope: scope, target: consentKey, allowed: allowed))
            var effects = ConversationHub.Effects(container: "", environment: .development)
            effects.highlightViewers = [viewer]
            return effects
        }, afterCommit: { hub.publish($0) })
    }
}
