import Foundation
import TandemCore
import TandemStore

/// One way to prove who you are (a password; later passkeys, OpenID Connect, exchanged ID
/// tokens). The sign-in service asks a method two things: whom the credential claims to be (so
/// per-account rate limits count before anything is checked), and which account it proves.
///
/// A credential is the request's fields as strings: a JSON body's members or a form's fields.
protocol SignInMethod: Sendable {
    /// The method's name in storage (`sign_in_methods.kind`).
    static var kind: String { get }
    /// Whom the credential claims to be, normalised (e.g. the email, lower-cased), for rate limits.
    /// - Throws: `BAD_REQUEST` when the credential is malformed (nothing was tried).
    func accountKey(_ credential: [String: String]) throws -> String
    /// The account the credential proves, or nil when it proves none. Wrong and unknown answer
    /// alike (same nil, comparable time), so a caller cannot tell which it was. A method whose
    /// refusal reveals no account (an ID token's broken rule) may throw `AUTHENTICATION_FAILED`
    /// with the reason instead; it counts as a failed attempt all the same.
    func authenticate(_ credential: [String: String]) throws -> UserAccount?
}

/// Email and password, hashed with Argon2id (decisions A3).
struct PasswordSignIn: SignInMethod {
    static let kind = "password"
    let store: any Store
    let hasher: Argon2id
    /// Checked when the email has no password, so an unknown email costs what a wrong password does.
    let decoy: String

    init(store: any Store, hasher: Argon2id) {
        self.store = store
        self.hasher = hasher
        decoy = (try? hasher.hash(Tokens.random(prefix: ""))) ?? "$argon2id$v=19$\(hasher.parameters)$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
    }

    func accountKey(_ credential: [String: String]) throws -> String {
        try EmailAddress.normalize(credential["email"] ?? "")
    }

    func authenticate(_ credential: [String: String]) throws -> UserAccount? {
        let email = try accountKey(credential)
        let password = try Self.password(credential["password"], forNewAccount: false)
        let found = try store.read { reader -> (UserAccount, StoredSignInMethod)? in
            guard let user = try reader.user(recordNameOrEmail: email), user.email?.lowercased() == email,
                  let method = try reader.signInMethods(user: user.recordName).first(where: { $0.kind == Self.kind }) else { return nil }
            return (user, method)
        }
        guard let (user, method) = found else {
            _ = hasher.verify(password, against: decoy)
            return nil
        }
        guard hasher.verify(password, against: method.secret) else { return nil }
        let now = Clock.milliseconds()
        // A hash made with other parameters is replaced now that the password is known (A3).
        let upgraded = hasher.needsRehash(method.secret) ? try hasher.hash(password) : nil
        try store.write { tx in
            if let upgraded {
                try tx.putSignInMethod(user: user.recordName, StoredSignInMethod(kind: Self.kind, subject: "", secret: upgraded, createdAt: now))
            }
            try tx.touchSignInMethod(user: user.recordName, kind: Self.kind, subject: "", at: now)
        }
        return user
    }

    /// Shortest password accepted for a new account or a reset (NIST SP 800-63B: at least 8).
    static let minimumLength = 8

    /// The password field, checked.
    /// - Throws: `BAD_REQUEST` when missing, longer than 1024 bytes, or (for a new password)
    ///   shorter than 8 characters.
    static func password(_ value: String?, forNewAccount: Bool) throws -> String {
        guard let value, !value.isEmpty else { throw CloudKitError.badRequest("'password' is required") }
        guard value.utf8.count <= Argon2id.maximumPasswordBytes else {
            throw CloudKitError.badRequest("a password is at most \(Argon2id.maximumPasswordBytes) bytes")
        }
        if forNewAccount && value.count < minimumLength {
            throw CloudKitError.badRequest("a password needs at least \(minimumLength) characters")
        }
        return value
    }
}

/// Email addresses as accounts use them.
enum EmailAddress {
    /// Trimmed and lower-cased.
    /// - Throws: `BAD_REQUEST` when it is not `local@domain.tld` (no spaces or control characters, at most 254 bytes).
    static func normalize(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
              !parts[1].hasSuffix("."), trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw CloudKitError.badRequest("'email' must be an email address")
        }
        return trimmed
    }
}
