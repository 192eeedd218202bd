import Foundation
import TandemCore
public import TandemStore

/// Administration used by the `tandem` CLI; safe while a server runs on the same data directory
/// (each command is one short transaction, which the store serializes with the server's own writes).
public enum Admin {
    /// Creates a container (both environments exist implicitly). Returns false if it existed.
    public static func createContainer(_ id: String, store: any Store) throws -> Bool {
        let allowed = id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F }
        guard Names.isValidRecordOrZoneName(id), allowed, id.first != "." else {
            throw CloudKitError.badRequest("a container ID is 1–255 letters, digits, '.', '-' or '_', not starting with '.' (e.g. iCloud.com.example.app)")
        }
        let now = Clock.milliseconds()
        return try store.write { try $0.createContainer(id, at: now) }
    }

    /// Adds a user. `name` is "Given Family" (the last word is the family name). Share
    /// invitations already addressed to the email or phone are linked to the new account.
    /// `discoverable` lets others find the user by email or phone (users/discover).
    /// - Throws: `EXISTS` when the email or phone is taken, `BAD_REQUEST` for an address without
    ///   '@' or a phone number with fewer than 5 digits.
    public static func addUser(email: String, name: String?, phone: String? = nil, discoverable: Bool = false,
                               store: any Store) throws -> UserAccount {
        let trimmed = email.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw CloudKitError.badRequest("'\(email)' is not an email address")
        }
        var given: String?
        var family: String?
        if let name, !name.isEmpty {
            var words = name.split(separator: " ").map(String.init)
            if words.count > 1 { family = words.removeLast() }
            given = words.joined(separator: " ")
        }
        if let phone, !PhoneNumbers.isValid(phone) {
            throw CloudKitError.badRequest("'\(phone)' is not a phone number")
        }
        let now = Clock.milliseconds()
        if try store.read({ try $0.user(recordNameOrEmail: trimmed) }) != nil {
            throw CloudKitError(.exists, "a user with email \(trimmed) already exists")
        }
        if let phone, try store.read({ try $0.user(matching: UserIdentity(phoneNumber: phone)) }) != nil {
            throw CloudKitError(.exists, "a user with phone number \(phone) already exists")
        }
        return try store.write { [given, family] tx in
            var user = try tx.addUser(email: trimmed, givenName: given, familyName: family, phoneNumber: phone, at: now)
            if discoverable {
                try tx.setDiscoverable(user: user.recordName, true)
                user.discoverable = true
            }
            return user
        }
    }

    /// Creates a user token for the user with this email or user record name; returns the token,
    /// which is shown once (only its SHA-256 is stored).
    public static func createUserToken(for key: String, store: any Store) throws -> String {
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else {
            throw CloudKitError(.notFound, "no user '\(key)' (add one with: tandem user add --email E --name \"Given Family\")")
        }
        let token = Tokens.make(kind: .user)
        let now = Clock.milliseconds()
        try store.write { try $0.addToken(hash: Tokens.hash(token), grant: TokenGrant(kind: .user, user: user, container: nil), at: now) }
        return token
    }

    /// Creates an API token (`ckAPIToken`) for a container.
    public static func createAPIToken(container: String, store: any Store) throws -> String {
        guard try store.read({ try $0.containerExists(container) }) else {
            throw CloudKitError(.notFound, "no container '\(container)'")
        }
        let token = Tokens.make(kind: .api)
        let now = Clock.milliseconds()
        try store.write { try $0.addToken(hash: Tokens.hash(token), grant: TokenGrant(kind: .api, user: nil, container: container), at: now) }
        return token
    }
}
