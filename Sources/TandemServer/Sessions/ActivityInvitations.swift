import Foundation
import TandemCore
import TandemCrypto
import TandemStore

/// Activity invitations (issue 23 item 4; SharePlay's `ShareLink` with a `GroupActivity`,
/// `GroupActivityTransferRepresentation`; decisions R19–R22): a link `/activity/{token}` and a
/// short join code that bring a member of a conversation into its group session, or start the
/// invitation's activity there when none is live. Only members of the conversation may use one;
/// everyone else is shown the activity's `fallbackURL` (R20).
struct ActivityInvitations: Sendable {
    /// Seconds an invitation lives when the creator does not say (R21).
    static let defaultLifetime: Int64 = 86_400
    /// The longest lifetime a creator may ask for, in seconds (R21).
    static let longestLifetime: Int64 = 30 * 86_400
    /// Join codes: 8 characters of this alphabet (40 random bits), shown as `ABCD-EFGH`.
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    static let tokenPrefix = "act_"
    static let pagePrefix = "/activity/"

    /// Lookups a person may make at once, by code, link or token, through `lookup` and
    /// `invitation.open` together (R39).
    static let lookupBurst = 20.0
    /// Lookups given back per second: one every 30 seconds (R39).
    static let lookupsPerSecond = 1.0 / 30
    /// Fresh tokens tried when a new one's join code (or token) is already taken (R41).
    static let codeAttempts = 5

    let store: any Store
    let membership: any SessionMembership
    /// The server's `secret.key`: join codes are derived from tokens with it (R19).
    let secret: [UInt8]
    /// Each person's lookups (R39), shared by every copy of this value.
    let lookups = TokenBuckets(rate: lookupsPerSecond, burst: lookupBurst,
                               reason: "too many activity invitation lookups; retry later")
    /// Where new tokens come from: 256 random bits (R19). Tests replace it to make a collision (R41).
    var newToken: @Sendable () -> String = { Tokens.random(prefix: ActivityInvitations.tokenPrefix) }

    /// A new invitation with the two secrets the creator is shown once.
    struct Made: Sendable {
        var invitation: StoredActivityInvitation
        var token: String
        var code: String
    }

    /// Makes an invitation to `activity` in `conversationID` for `lifetime` seconds.
    /// - Throws: `NOT_FOUND` when the creator is not a member of the conversation (W1: a stranger
    ///   learns nothing about it), `BAD_REQUEST` for a lifetime outside 1…30 days' seconds,
    ///   `TRY_AGAIN_LATER` (with `retryAfter`) when `codeAttempts` fresh codes were all taken (R41).
    func create(creator: String, conversationID: String, activity: SessionActivity, lifetime: Int64?, container: String,
                environment: Environment) throws -> Made {
        let seconds = lifetime ?? Self.defaultLifetime
        guard seconds >= 1, seconds <= Self.longestLifetime else {
            throw CloudKitError.badRequest("'lifetime' is seconds from 1 to \(Self.longestLifetime) (30 days)")
        }
        guard try membership.members(of: conversationID, container: container, environment: environment)?.contains(creator) == true else {
            throw CloudKitError(.notFound, "no conversation '\(conversationID)'")
        }
        let now = Clock.milliseconds()
        let invitation = StoredActivityInvitation(id: UUID.random().uuidString, container: container, environment: environment,
                                                  conversationID: conversationID, creator: creator, activity: JSONWriter.string(activity.json),
                                                  createdAt: now, expiresAt: now + seconds * 1000, revokedAt: nil)
        // A join code is 40 bits, so a new one can be another invitation's: draw a fresh token
        // (and so code) in the same transaction, up to `codeAttempts` times (R41).
        let made = try store.write { tx -> Made? in
            for _ in 0..<Self.codeAttempts {
                let token = newToken()
                let code = code(for: token)
                if try tx.addActivityInvitation(invitation, tokenHash: Tokens.hash(token), codeHash: Tokens.hash(code)) {
                    return Made(invitation: invitation, token: token, code: code)
                }
            }
            return nil
        }
        guard let made else {
            var busy = CloudKitError(.tryAgainLater, "no free join code was found; try again")
            busy.retryAfter = 1
            throw busy
        }
        return made
    }

    /// The invitation `reference` names (its URL, token or join code) in this container
    /// environment, with its activity, while it can be used, as `user` looks it up. Each lookup
    /// takes one of `user`'s tokens (R39); one that finds a usable invitation gives it back.
    /// - Throws: `THROTTLED` with `retryAfter` when `user` has none left, before anything is
    ///   read; `NOT_FOUND` "no such activity invitation" for an unknown, another container's,
    ///   an expired and a revoked invitation alike, so a guesser learns nothing from the answer
    ///   (R40); `BAD_REQUEST` for text that cannot be a link, token or join code at all (a code
    ///   cut short, say), which takes no token: it cannot find anything, so it guesses nothing (R43).
    func usable(_ reference: String, user: String, container: String, environment: Environment) throws -> (StoredActivityInvitation, SessionActivity) {
        guard let key = Self.key(reference) else { throw CloudKitError.badRequest(Self.unreadable) }
        try lookups.take(user)
        guard let invitation = try store.read({ try $0.activityInvitation(hash: Tokens.hash(key)) }),
              invitation.container == container, invitation.environment == environment,
              invitation.revokedAt == nil, invitation.expiresAt > Clock.milliseconds() else {
            lookups.counted(user)
            throw CloudKitError(.notFound, Self.unusable)
        }
        let activity = try SessionActivity.parse(try JSONParser.parse(invitation.activity))
        lookups.giveBack(user)
        return (invitation, activity)
    }

    /// The one reason given for an invitation that cannot be used, whatever the cause (R40).
    static let unusable = "no such activity invitation"
    /// The reason given for text that is no invitation link, token or join code (R43).
    static let unreadable = "not an activity invitation link or join code (a code has 8 letters and digits, as ABCD-EFGH)"

    /// Whether `user` may use `invitation`: a member of its conversation now (R20).
    func admits(_ user: String, _ invitation: StoredActivityInvitation) throws -> Bool {
        try membership.members(of: invitation.conversationID, container: invitation.container, environment: invitation.environment)?
            .contains(user) == true
    }

    /// Revokes the creator's invitation `id`.
    /// - Throws: `NOT_FOUND` for anyone else's, an unknown or an already revoked one (the same
    ///   answer, so an ID tells a stranger nothing).
    func revoke(id: String, creator: String) throws {
        guard try store.write({ try $0.revokeActivityInvitation(id: id, creator: creator, at: Clock.milliseconds()) }) else {
            throw CloudKitError(.notFound, "no activity invitation '\(id)' of yours to revoke")
        }
    }

    /// What `viewer` is shown of an invitation (R20): members everything but the secrets;
    /// anyone else the activity's identifier, type and `fallbackURL` only (SharePlay shows the
    /// fallback to people who cannot take part), with `canJoin` false.
    static func preview(_ invitation: StoredActivityInvitation, _ activity: SessionActivity, member: Bool) -> JSONValue {
        var shown: JSONObject = ["canJoin": .bool(member), "expiresAt": .int(invitation.expiresAt)]
        if member {
            shown["invitationID"] = .string(invitation.id)
            shown["conversationID"] = .string(invitation.conversationID)
            shown["creator"] = .string(invitation.creator)
            shown["activity"] = activity.json
        } else {
            var metadata: JSONObject = ["type": activity.metadata["type"] ?? "generic"]
            if let fallback = activity.metadata["fallbackURL"] { metadata["fallbackURL"] = fallback }
            shown["activity"] = .object(["identifier": .string(activity.identifier), "metadata": .object(metadata)])
        }
        return .object(shown)
    }

    /// The creator's view of a new invitation, with its URL and code.
    static func json(_ made: Made, baseURL: String) -> JSONValue {
        .object(["invitationID": .string(made.invitation.id), "url": .string(baseURL + pagePrefix + made.token),
                 "code": .string(displayCode(made.code)), "conversationID": .string(made.invitation.conversationID),
                 "creator": .string(made.invitation.creator), "activity": (try? JSONParser.parse(made.invitation.activity)) ?? .null,
                 "createdAt": .int(made.invitation.createdAt), "expiresAt": .int(made.invitation.expiresAt)])
    }

    // MARK: Tokens and codes

    /// The join code of `token`: 40 bits of `HMAC-SHA-256(secret, "tandem activity code v1 " + token)`
    /// as 8 base32 characters. Derived, not stored, so the invitation page (which has the
    /// token) can show it while the store keeps only hashes of both.
    func code(for token: String) -> String {
        let bytes = Digest.hmacSHA256(key: secret, message: Array(("tandem activity code v1 " + token).utf8)).prefix(5)
        var value = 0
        for byte in bytes { value = value << 8 | Int(byte) }
        return String(decoding: (0..<8).map { Self.alphabet[(value >> (35 - 5 * $0)) & 31] }, as: UTF8.self)
    }

    /// `abcdefgh` → `ABCD-EFGH`.
    static func displayCode(_ code: String) -> String { (code.prefix(4) + "-" + code.dropFirst(4)).uppercased() }

    /// What is hashed to find an invitation: the token of a link (`…/activity/{token}`, any host,
    /// since the server may be reached under several names) or a token by itself, else a join
    /// code read as Crockford base32 (case ignored; spaces, tabs and every kind of dash ignored;
    /// `i` and `l` read as `1`, `o` as `0`). Punctuation a sentence puts around a pasted code or
    /// link (`.`, `,`, `;`, `:`, `!`, `?`, quotes, brackets) is dropped from its ends first (R43).
    /// A link names its invitation by token only, never by code, and a token has one length
    /// (`isToken`). nil for anything else.
    static func key(_ reference: String) -> String? {
        var text = Substring(reference.trimmingCharacters(in: .whitespacesAndNewlines))
        while let last = text.last, surrounding.contains(last) { text = text.dropLast() }
        while let first = text.first, surrounding.contains(first) { text = text.dropFirst() }
        if let range = text.range(of: pagePrefix) {
            let token = text[range.upperBound...].prefix { $0 != "?" && $0 != "#" && $0 != "/" }
            return isToken(token) ? String(token) : nil
        }
        if text.hasPrefix(tokenPrefix) { return isToken(text) ? String(text) : nil }
        var code = ""
        for character in text.lowercased() {
            if character.isWhitespace || dashes.contains(character) { continue }
            switch character {
            case "i", "l": code.append("1")
            case "o": code.append("0")
            default: code.append(character)
            }
            if code.utf8.count > 8 { return nil }
        }
        return code.utf8.count == 8 && code.utf8.allSatisfy({ alphabet.contains($0) }) ? code : nil
    }

    /// Whether `text` has a token's form: `act_` and the 43 base64url characters of 32 random
    /// bytes (`Tokens.random`). Anything else, a link cut short say, can find nothing (R43).
    static func isToken(_ text: Substring) -> Bool {
        let body = text.utf8.dropFirst(tokenPrefix.utf8.count)
        return text.hasPrefix(tokenPrefix) && body.count == 43
            && body.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "_"): true
                default: false
                }
            }
    }

    /// Hyphen-minus, hyphen, non-breaking hyphen, figure dash, en and em dash, horizontal bar,
    /// minus sign, small and full-width hyphen-minus: what a code's dash becomes on its way
    /// through a chat or a word processor.
    static let dashes: Set<Character> = ["-", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2015}", "\u{2212}",
                                         "\u{FE63}", "\u{FF0D}"]
    /// What a sentence puts around a pasted code or link.
    static let surrounding: Set<Character> = [".", ",", ";", ":", "!", "?", "\"", "'", "(", ")", "[", "]", "<", ">",
                                              "\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}", "\u{00AB}", "\u{00BB}"]
}
