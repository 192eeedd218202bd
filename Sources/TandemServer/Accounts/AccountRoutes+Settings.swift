import Foundation
import TandemCore
import TandemStore

/// `GET|POST /auth/1/{container}/account`: the signed-in person's account, and their settings
/// (decisions A31: `invitationEmails`; A48: `avatarURL`, set through `account/avatar`; R31:
/// `givenName`, `familyName`, the name others see).
enum AccountSettingsRoute {
    /// Applies the settings in `body` (none for GET) and answers the account with its settings.
    /// - Throws: `BAD_REQUEST` for an unknown key or `invitationEmails` that is not true or false
    ///   (nothing is changed); `AUTHENTICATION_FAILED` when the account is gone.
    static func apply(_ body: JSONObject, user: String, _ context: RequestContext, _ services: Services) throws -> JSONValue {
        try RequestContext.refuseUnknownKeys(body, known: ["invitationEmails", "givenName", "familyName"], noun: "setting",
                                             listing: "the account's settings are: invitationEmails, givenName, familyName (the avatar: POST account/avatar)")
        let invitationEmails: Bool?
        switch body["invitationEmails"] {
        case nil: invitationEmails = nil
        case .bool(let on)?: invitationEmails = on
        default: throw CloudKitError.badRequest("'invitationEmails' must be true or false")
        }
        let names = body["givenName"] != nil || body["familyName"] != nil
        // Refuse a malformed name before taking the writer; the kept half is read in the write's
        // own transaction, so two requests each setting one half cannot undo each other.
        _ = try name(body, "givenName", current: nil)
        _ = try name(body, "familyName", current: nil)
        try services.store.write { tx in
            if let invitationEmails { try tx.setInvitationEmails(user: user, invitationEmails) }
            if names {
                let stored = try tx.user(recordNameOrEmail: user)
                try tx.setNames(user: user, givenName: try name(body, "givenName", current: stored?.givenName),
                                familyName: try name(body, "familyName", current: stored?.familyName))
            }
        }
        // Cached grants carry the account, whose names `users/current` answers.
        if names { services.authenticator.revoked() }
        return try account(user: user, context, services)
    }

    /// Longest `givenName` or `familyName`, in characters (R31).
    static let nameLimit = 100

    /// The name `key` of `body`: trimmed, `null` or empty clears it, absent keeps `current`.
    /// - Throws: `BAD_REQUEST` for a value that is not a string, is longer than `nameLimit`
    ///   characters or holds a control or bidirectional override character.
    private static func name(_ body: JSONObject, _ key: String, current: String?) throws -> String? {
        switch body[key] {
        case nil: return current
        case .null?: return nil
        case .string(let raw)?:
            let value = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            // Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) would
            // let a name display as someone else's ("\u{202E}ecilA" shows "Alice").
            guard value.count <= nameLimit, !value.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
            }) else {
                throw CloudKitError.badRequest("'\(key)' must be at most \(nameLimit) characters without control or bidirectional override characters")
            }
            return value.isEmpty ? nil : value
        default: throw CloudKitError.badRequest("'\(key)' must be a string or null")
        }
    }

    /// The account as `GET account` answers it: `{userRecordName, email, emailVerified,
    /// displayName, createdAt, invitationEmails, givenName?, familyName?, avatarURL?}` (`avatarURL`
    /// signed for the person).
    static func account(user: String, _ context: RequestContext, _ services: Services) throws -> JSONValue {
        try services.store.read { reader in
            guard let profile = try reader.profile(user: user), let account = try reader.user(recordNameOrEmail: user) else {
                throw CloudKitError(.authenticationFailed, "the account no longer exists")
            }
            guard case .object(var answer) = AccountRoutes.json(profile) else { return AccountRoutes.json(profile) }
            answer["invitationEmails"] = .bool(try reader.invitationEmails(user: user))
            if let given = account.givenName { answer["givenName"] = .string(given) }
            if let family = account.familyName { answer["familyName"] = .string(family) }
            if let url = AvatarRoutes.url(of: account, reader: user, base: context.baseURL, signer: services.assetRoutes.signer) {
                answer["avatarURL"] = .string(url)
            }
            return .object(answer)
        }
    }
}
