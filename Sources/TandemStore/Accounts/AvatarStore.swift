/// A person's picture (issue 16 item 1; decisions A48): the checksum of its bytes in the
/// store's `avatars` files and the image type it was checked to be.
public struct Avatar: Sendable, Hashable {
    /// SHA-256 of the bytes, 64 lowercase hex digits (the file's name in `Store.avatars`).
    public var checksum: String
    /// `image/png`, `image/jpeg` or `image/webp`.
    public var contentType: String

    public init(checksum: String, contentType: String) {
        self.checksum = checksum
        self.contentType = contentType
    }
}

extension Avatar {
    /// The checksum a write that replaced the avatar `previous` with `next` left unused: `previous`
    /// when it differs from `next` and no account holds it any more (`inUse`, asked inside the
    /// same write), else nil. The caller erases that file after the commit (decisions P6); both
    /// stores' `setAvatar` answer with it.
    package static func leftUnused(replacing previous: String?, with next: Avatar?,
                                   inUse: (String) throws -> Bool) rethrows -> String? {
        guard let previous, previous != next?.checksum, try !inUse(previous) else { return nil }
        return previous
    }
}

/// Whether an avatar file is still needed.
public protocol AvatarReading {
    /// Whether any account holds an avatar with `checksum`.
    func avatarInUse(checksum: String) throws -> Bool
}

/// Setting and clearing avatars. A file in `Store.avatars` may go once no account holds its
/// checksum; a write says which checksum it left unused, and the server erases the file after
/// the commit if no account holds it by then (decisions P6: writers may run concurrently).
public protocol AvatarWriting: AvatarReading {
    /// Sets (or, with nil, clears) the avatar of the live account `user`. Returns the checksum of
    /// the avatar it replaced when no account holds it any more (its file may go), else nil.
    /// - Throws: `AvatarAccountGone` when there is no such account or it was deleted.
    func setAvatar(user: String, _ avatar: Avatar?) throws -> String?
}

/// The account whose avatar was to change does not exist (or was deleted).
public struct AvatarAccountGone: Error {
    public init() {}
}
