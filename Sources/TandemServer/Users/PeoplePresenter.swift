import TandemCore
import TandemStore

/// The names and pictures a viewer sees of the people named in what they read — highlight
/// attributions' senders, notices' actors (decisions R32; share participants: `SharePresenter`).
///
/// A person shows (`nameComponents` and a signed `avatarURL`, never contact details) to
/// themselves and to whoever shares a conversation or a share with them
/// (`sharesConversationOrShare`); to anyone else, not at all. The `avatarURL` is signed for the
/// viewer, so it works only for them (A48's signer and download check).
struct PeoplePresenter {
    let reader: any StoreReading
    let viewer: String
    /// The server's base URL as the viewer reaches it (the avatar URLs' prefix).
    let baseURL: String
    let signer: AssetURLSigner?

    /// The response's `people` object: `{userRecordName: identity}` (`ShareCodec.encodeIdentity`'s
    /// shape) for each of `names` the viewer may see; strangers are left out.
    func people(_ names: some Sequence<String>) throws -> JSONObject {
        var out = JSONObject()
        for name in Set(names) where !name.isEmpty {
            if let identity = try identity(of: name) { out[name] = ShareCodec.encodeIdentity(identity) }
        }
        return out
    }

    /// The people of a highlight list: attributions' senders and collaborations' owners.
    func people(of highlights: [Highlight]) throws -> JSONObject {
        try people(highlights.flatMap { $0.attributions.map(\.sender) + [$0.collaboration?.owner].compactMap { $0 } })
    }

    /// The people of notices or other conversation events: their actors.
    func people(of events: [StoredConversationEvent]) throws -> JSONObject {
        try people(events.map(\.actor))
    }

    /// `people` for `viewer` in one read of the store, for a request's answer.
    static func people(_ services: Services, _ context: RequestContext, viewer: String,
                       _ names: @escaping (PeoplePresenter) throws -> JSONObject) throws -> JSONValue {
        .object(try services.store.read { reader in
            try names(PeoplePresenter(reader: reader, viewer: viewer, baseURL: context.baseURL, signer: context.assetSigner))
        })
    }

    /// `person` as the viewer sees them, or nil for a stranger (or no such account).
    func identity(of person: String) throws -> UserIdentity? {
        guard try person == viewer || reader.sharesConversationOrShare(viewer, with: person),
              let account = try reader.user(matching: UserIdentity(userRecordName: person)) else { return nil }
        return UserIdentity(userRecordName: person, givenName: account.givenName, familyName: account.familyName,
                            avatarURL: AvatarRoutes.url(of: account, reader: viewer, base: baseURL, signer: signer))
    }
}
