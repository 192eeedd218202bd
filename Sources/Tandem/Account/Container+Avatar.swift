public import Foundation
internal import TandemCore

extension Container {
    /// Largest avatar the server takes, in bytes (1 MiB; decisions A48).
    public static let maximumAvatarBytes = 1 << 20

    /// The signed-in user's identity (CloudKit JS `fetchCurrentUserIdentity()`; CloudKit Web
    /// Services `users/current`): user record ID, name components, email, and `avatarURL` when
    /// they set a picture. Like `userRecordID()`, the answer tells `accountChanges` who is
    /// signed in.
    /// - Throws: `notAuthenticated` (or `sessionExpired`, `sessionRevoked`) without a valid user;
    ///   network errors.
    public func currentUserIdentity() async throws(TandemError) -> UserIdentity {
        UserIdentity(wire: ShareCodec.decodeIdentity(try await transport.currentUser().identity))
    }

    /// Sets the signed-in user's picture (`POST /auth/1/{container}/account/avatar`, Tandem's
    /// accounts API; decisions A48). The account is server-wide, so the picture shows in every
    /// app on this server: in `currentUserIdentity()`, and in lookups of them by others when they
    /// are discoverable (`setDiscoverable(true)`).
    /// - Parameters:
    ///   - data: the image file's bytes, at most `maximumAvatarBytes` (1 MiB). The server checks
    ///     that they begin as `contentType` says (PNG, JPEG or WebP signature); it does not
    ///     resize or re-encode them.
    ///   - contentType: `image/png`, `image/jpeg` or `image/webp`.
    /// - Returns: the new `avatarURL`, signed for the signed-in user (1–2 hours; it works
    ///   without credentials, e.g. in an image view).
    /// - Throws: `limitExceeded` over 1 MiB (checked here, before anything is sent);
    ///   `invalidArguments` for another content type or bytes that are not that type;
    ///   `notAuthenticated` without a signed-in user (also checked here); network errors.
    @discardableResult
    public func setAvatar(_ data: Data, contentType: String) async throws(TandemError) -> URL {
        guard data.count <= Self.maximumAvatarBytes else {
            throw TandemError(.limitExceeded, "an avatar may be at most \(Self.maximumAvatarBytes) bytes (1 MiB); this one has \(data.count)")
        }
        let answer = try await accountRequest("account/avatar", body: data, contentType: contentType)
        guard let text = answer["avatarURL"]?.stringValue, let url = URL(string: text) else {
            throw TandemError(.internalError, "account/avatar answered without an avatarURL")
        }
        return url
    }

    /// Clears the signed-in user's picture (`POST /auth/1/{container}/account/avatar/remove`);
    /// URLs handed out for it stop working. Nothing happens to an account without one.
    /// - Throws: `notAuthenticated` without a signed-in user; network errors.
    public func removeAvatar() async throws(TandemError) {
        _ = try await accountRequest("account/avatar/remove", body: Data(), contentType: "application/json")
    }

    /// POSTs `body` to an account operation (`account`, `account/avatar`, …) as the signed-in
    /// user; the account it answers.
    func accountRequest(_ operation: String, body: Data, contentType: String) async throws(TandemError) -> JSONValue {
        let current = credentials
        guard current.userToken != nil else {
            throw TandemError(.notAuthenticated, "sign in first: a name or an avatar belongs to the signed-in user")
        }
        let data = try await transport.send(transport.authURL(operation, apiToken: current.apiTokenValue, presentingUser: true),
                                            method: "POST", body: body, contentType: contentType)
        do { return try JSONParser.parse([UInt8](data)) } catch {
            throw TandemError(.serverResponseLost, "the server's answer is not JSON: \(error)")
        }
    }
}
