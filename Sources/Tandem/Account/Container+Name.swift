public import Foundation
internal import TandemCore

extension Container {
    /// Sets the name the signed-in user shows others (`POST /auth/1/{container}/account` with
    /// `givenName` and `familyName`, Tandem's accounts API; decisions R31). Only the given and
    /// family names are kept: each at most 100 characters, trimmed; a nil or empty one clears it.
    /// The name shows, with the picture (`setAvatar`), to the people who share a conversation
    /// or a share with the user (`Attribution.senderIdentity`, `ConversationEvent.actorIdentity`,
    /// share participants' `UserIdentity`; R32) and in `currentUserIdentity()`.
    /// - Throws: `invalidArguments` for a name over 100 characters or with control characters;
    ///   `notAuthenticated` without a signed-in user (checked here); network errors.
    public func setNameComponents(_ names: PersonNameComponents) async throws(TandemError) {
        let body: JSONObject = ["givenName": names.givenName.map(JSONValue.string) ?? .null,
                                "familyName": names.familyName.map(JSONValue.string) ?? .null]
        _ = try await accountRequest("account", body: Data(JSONWriter.string(.object(body)).utf8), contentType: "application/json")
    }
}
