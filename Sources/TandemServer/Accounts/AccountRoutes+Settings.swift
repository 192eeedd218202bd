import TandemCore
import TandemStore

/// `GET|POST /auth/1/{container}/account`: the signed-in person's account, and their settings
/// (decisions A31: `invitationEmails`; A48: `avatarURL`, set through `account/avatar`).
enum AccountSettingsRoute {
    /// Applies the settings in `body` (none for GET) and answers the account with its settings.
    /// - Throws: `BAD_REQUEST` for an unknown key or `invitationEmails` that is not true or false
    ///   (nothing is changed); `AUTHENTICATION_FAILED` when the account is gone.
    static func apply(_ body: JSONObject, user: String, _ context: RequestContext, _ services: Services) throws -> JSONValue {
        if let unknown = body.keys.first(where: { $0 != "invitationEmails" }) {
            throw CloudKitError.badRequest("unknown setting '\(unknown)'; the account's settings are: invitationEmails (the avatar: POST account/avatar)")
        }
        var invitationEmails: Bool?
        switch body["invitationEmails"] {
        case nil: break
        case .bool(let on)?: invitationEmails = on
        default: throw CloudKitError.badRequest("'invitationEmails' must be true or false")
        }
        if let invitationEmails { try services.store.write { try $0.setInvitationEmails(user: user, invitationEmails) } }
        return try account(user: user, context, services)
    }

    /// The account as `GET account` answers it: `{userRecordName, email, emailVerified,
    /// displayName, createdAt, invitationEmails, avatarURL?}` (`avatarURL` signed for the person).
    static func account(user: String, _ context: RequestContext, _ services: Services) throws -> JSONValue {
        try services.store.read { reader in
            guard let profile = try reader.profile(user: user), let account = try reader.user(recordNameOrEmail: user) else {
                throw CloudKitError(.authenticationFailed, "the account no longer exists")
            }
            guard case .object(var answer) = AccountRoutes.json(profile) else { return AccountRoutes.json(profile) }
            answer["invitationEmails"] = .bool(try reader.invitationEmails(user: user))
            if let url = AvatarRoutes.url(of: account, reader: user, base: context.baseURL, signer: services.assetRoutes.signer) {
                answer["avatarURL"] = .string(url)
            }
            return .object(answer)
        }
    }
}
