import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Avatars (issue 16 item 1; decisions A48): a signed-in person sets or clears their picture,
/// and it is served back through signed URLs like asset `downloadURL`s (J5).
///
/// - `POST /auth/1/{container}/account/avatar` with the picture's bytes as the body
///   (`Content-Type: image/png|image/jpeg|image/webp`, at most 1 MiB, the type confirmed by the
///   bytes' signature; `AvatarImage`) and the user token → the account, with `avatarURL`. The
///   sender is authenticated from the head before a body byte is read (`BodyAdmission`).
/// - `POST /auth/1/{container}/account/avatar/remove` → the account, without `avatarURL`.
/// - `GET /avatars/1/{userRecordName}/{checksum}?e=…&r=…&s=…` → the bytes with their type. The
///   signature (`AssetURLSigner`, over this path, the reader and the expiry) names the reader; the
///   picture is served while it is still that person's avatar and the reader may still see it
///   (it is theirs, its owner is discoverable, or the two share a conversation or a share: R32). Forged, unsigned or stale: `NOT_FOUND`;
///   expired: `ACCESS_DENIED`.
///
/// An avatar's file lives in the store's `avatars/` folder, named by its SHA-256; it is erased
/// once no account holds it (replaced, removed, or the account deleted).
struct AvatarRoutes {
    static let downloadPrefix = "/avatars/1/"
    let services: Services

    init(services: Services) { self.services = services }

    /// Whether `head` is an avatar upload (`POST /auth/1/{container}/account/avatar`), whose
    /// body is admitted only from its signed-in sender (`BodyAdmission`).
    static func isUpload(_ head: HTTPRequestHead) -> Bool {
        guard head.method == "POST", head.path.hasPrefix(AccountRoutes.prefix) else { return false }
        let segments = head.path.dropFirst(AccountRoutes.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        return segments.count == 3 && segments[1] == "account" && segments[2] == "avatar"
    }

    /// Sets the signed-in `user`'s avatar from the request body.
    func set(_ context: RequestContext, user: String) throws -> JSONValue {
        let declared = try AvatarImage.declaredType(context.request.head.headers["content-type"])
        let bytes = context.request.body
        try AvatarImage.check(bytes, declared: declared)
        let avatars = services.store.avatars
        let checksum = try avatars.store(bytes)
        try change(user: user, to: Avatar(checksum: checksum, contentType: declared))
        // A release by another account's write may have erased the same bytes meanwhile (P6).
        try AvatarFileKeeper.restore(bytes, checksum: checksum, files: avatars)
        return try AccountSettingsRoute.account(user: user, context, services)
    }

    /// Clears the signed-in `user`'s avatar.
    func remove(_ context: RequestContext, user: String) throws -> JSONValue {
        try change(user: user, to: nil)
        return try AccountSettingsRoute.account(user: user, context, services)
    }

    /// Writes the avatar, erases the file nobody holds any more after the commit (P6), and
    /// drops the cached grants (they carry the account, whose avatar `users/current` answers).
    private func change(user: String, to avatar: Avatar?) throws {
        let unused: String?
        do {
            unused = try services.store.write { tx in try tx.setAvatar(user: user, avatar) }
        } catch is AvatarAccountGone {
            throw CloudKitError(.authenticationFailed, "the account no longer exists")
        }
        if let unused { AvatarFileKeeper.release(unused, store: services.store) }
        services.authenticator.revoked()
    }

    /// The signed URL of `owner`'s avatar for `reader`, or nil without one.
    static func url(of owner: UserAccount, reader: String, base: String, signer: AssetURLSigner?,
                    now: Int64 = Clock.milliseconds() / 1000) -> String? {
        guard let avatar = owner.avatar, let signer, !reader.isEmpty else { return nil }
        let path = downloadPrefix + owner.recordName + "/" + avatar.checksum
        let expires = AssetURLSigner.expiry(now: now)
        return base + path + "?e=\(expires)&r=\(AssetRoutes.escape(reader))&s=\(signer.signature(path: path, reader: reader, expires: expires))"
    }

    /// `owner`'s avatar URL for `reader` where others see it: their own, or a discoverable
    /// person's (the lookups that show names; decisions A48).
    static func visibleURL(of owner: UserAccount, reader: String, base: String, signer: AssetURLSigner?) -> String? {
        guard owner.recordName == reader || owner.discoverable else { return nil }
        return url(of: owner, reader: reader, base: base, signer: signer)
    }

    /// GET /avatars/1/{userRecordName}/{checksum}: the picture, for the reader a signed URL names.
    func download(_ context: RequestContext) throws -> HTTPResponse {
        let path = context.request.head.path
        let parts = path.dropFirst(Self.downloadPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, let signer = services.assetRoutes.signer, let signature = context.parameters["s"],
              let expires = context.parameters["e"].flatMap({ Int64($0) }), let reader = context.parameters["r"], !reader.isEmpty,
              signer.isValid(signature: signature, path: path, reader: reader, expires: expires) else {
            throw CloudKitError(.notFound, "avatar not found")
        }
        let now = Clock.milliseconds() / 1000
        guard expires > now else {
            throw CloudKitError(.accessDenied, "this avatar URL expired; look the person up again for a fresh avatarURL")
        }
        let (owner, checksum) = (parts[0], parts[1])
        let (found, mayRead) = try services.store.read { store -> (UserAccount?, Bool) in
            guard let found = try store.user(recordNameOrEmail: owner), found.recordName == owner else { return (nil, false) }
            let visible = Self.visibleURL(of: found, reader: reader, base: "", signer: signer) != nil
            return (found, try visible || store.sharesConversationOrShare(reader, with: owner))
        }
        guard let found, mayRead, let avatar = found.avatar, avatar.checksum == checksum,
              let bytes = services.store.avatars.read(checksum: checksum) else {
            throw CloudKitError(.notFound, "avatar not found")
        }
        return HTTPResponse(status: 200, headers: [
            ("content-type", avatar.contentType), ("x-content-type-options", "nosniff"),
            ("content-security-policy", "default-src 'none'; sandbox"),
            ("etag", "\"\(checksum)\""), ("cache-control", "private, max-age=\(expires - now), immutable"),
        ], body: bytes)
    }
}
