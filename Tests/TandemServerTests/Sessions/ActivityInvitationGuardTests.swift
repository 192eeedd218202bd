import Foundation
import Synchronization
import Testing
import TandemCore
@testable import TandemServer
import TandemStore
import TandemTestSupport

/// The review's three defects in activity invitations (issue 23; decisions R39–R42), against a
/// real `tandem serve`: guessing join codes is throttled per person, an unusable invitation gets
/// one answer whatever the cause, `create` refuses unknown keys, and a join code already taken
/// is drawn again inside the create.
@Suite("Activity invitation guards")
struct ActivityInvitationGuardTests {
    static let server = LazyTestServer()
    static let activity: JSONValue = ["identifier": "com.example.sketch", "payload": "{}",
                                      "metadata": ["title": "Sketch", "fallbackURL": "https://example.com/sketch"]]

    /// A conversation of `creator` and `member`.
    static func conversation(_ server: TestServer, _ creator: Person, _ member: Person) throws -> String {
        let created = try server.tandem("conversations/create", ["members": [.string(member.recordName)]], as: creator)
        return try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
    }

    /// A new invitation of `creator` in `conversation`: its URL, display code and ID.
    static func invitation(_ server: TestServer, _ creator: Person, in conversation: String, lifetime: Int64? = nil) throws
        -> (url: String, code: String, id: String) {
        var body: JSONObject = ["conversationID": .string(conversation), "activity": activity]
        if let lifetime { body["lifetime"] = .int(lifetime) }
        let made = try server.tandem("activities/invitations/create", .object(body), as: creator)
        guard let url = made.json["url"]?.stringValue, let code = made.json["code"]?.stringValue,
              let id = made.json["invitationID"]?.stringValue else { throw TestFailure("create: \(made.text)") }
        return (url, code, id)
    }

    /// A well-formed join code that is almost surely nobody's (40 random bits).
    static func guess() -> String {
        String((0..<8).map { _ in "0123456789ABCDEFGHJKMNPQRSTVWXYZ".randomElement()! })
    }

    /// Seed behaviour: an expired and a revoked invitation answered "… expired" / "… was revoked
    /// by its creator", telling a guesser that the code had existed. Now unknown, expired and
    /// revoked codes, links and tokens get the same status, `serverErrorCode` and `reason` (R40).
    @Test func unknownExpiredAndRevokedInvitationsGetOneAnswer() throws {
        let server = try Self.server.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let conversation = try Self.conversation(server, ada, bob)
        let expiring = try Self.invitation(server, ada, in: conversation, lifetime: 1)
        let revoked = try Self.invitation(server, ada, in: conversation)
        #expect(try server.tandem("activities/invitations/revoke", ["invitationID": .string(revoked.id)], as: ada).status == 200)
        Thread.sleep(forTimeInterval: 1.3)   // past the 1-second lifetime

        // A well-formed token nobody was given: the revoked one with its last character changed.
        let unknownURL = String(revoked.url.dropLast()) + (revoked.url.hasSuffix("A") ? "B" : "A")
        let references = [Self.guess(), unknownURL, expiring.code, expiring.url, revoked.code, revoked.url]
        let answers = try references.map { reference in
            let answer = try server.tandem("activities/invitations/lookup", ["invitation": .string(reference)], as: bob)
            return "\(answer.status) \(answer.json["serverErrorCode"]?.stringValue ?? "-") \(answer.json["reason"]?.stringValue ?? "-")"
        }
        #expect(answers == Array(repeating: "404 NOT_FOUND no such activity invitation", count: references.count), "\(answers)")
    }

    /// Seed behaviour: 300 wrong codes in 5 s all got 404, nothing slowed the guesser. Now each
    /// person has 20 lookups at once, one back every 30 s (R39): a usable invitation looked up
    /// again and again never counts; wrong codes are answered 404 until the bucket is empty, then
    /// `THROTTLED` with `retryAfter` and `Retry-After` — for a right code too, so nothing is
    /// read — while another person is not slowed.
    @Test func guessingCodesIsThrottledWhileLookingUpARealOneIsNot() throws {
        let server = try Self.server.server
        let ada = try server.person("ada"), guesser = try server.person("eve"), other = try server.person("carl")
        let conversation = try Self.conversation(server, ada, guesser)
        let real = try Self.invitation(server, ada, in: conversation)
        func lookup(_ reference: String, as person: Person) throws -> TestServer.Response {
            try server.tandem("activities/invitations/lookup", ["invitation": .string(reference)], as: person)
        }
        for _ in 0..<30 {
            let found = try lookup(real.code, as: guesser)
            #expect(found.status == 200, "a real code is never throttled: \(found.text)")
        }
        // The bucket starts full and only refills, so the first 20 wrong codes are all answered.
        for _ in 0..<Int(ActivityInvitations.lookupBurst) {
            let wrong = try lookup(Self.guess(), as: guesser)
            #expect(wrong.status == 404, "\(wrong.text)")
        }
        var throttled: TestServer.Response?
        for _ in 0..<40 where throttled == nil {
            let wrong = try lookup(Self.guess(), as: guesser)
            if wrong.status == 429 { throttled = wrong } else { #expect(wrong.status == 404, "\(wrong.text)") }
        }
        let refused = try #require(throttled, "60 wrong codes in a row were never throttled")
        #expect(refused.json["serverErrorCode"]?.stringValue == "THROTTLED")
        let retryAfter = try #require(refused.json["retryAfter"]?.int64Value, "\(refused.text)")
        #expect(retryAfter >= 1 && refused.headers["retry-after"] == String(retryAfter))
        #expect(try lookup(real.code, as: guesser).status == 429, "throttled before the store is read")
        #expect(try lookup(real.url, as: other).status == 200, "per person: someone else is not slowed")
    }

    /// Seed behaviour: a code pasted with an en dash, a tab or a full stop after it was "no such
    /// invitation", and so was a code cut short, each taking one of the person's 20 lookups (a
    /// person fixing a paste could lock themselves out). Now the dash, space and punctuation a
    /// chat adds are read through, and text that cannot be a code or link at all is
    /// `BAD_REQUEST` without taking a lookup (R43); a link names its invitation by token only.
    @Test func pastedVariantsOfARealCodeFindItAndUnreadableTextTakesNoLookup() throws {
        let server = try Self.server.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let conversation = try Self.conversation(server, ada, bob)
        let real = try Self.invitation(server, ada, in: conversation)
        func lookup(_ reference: String) throws -> TestServer.Response {
            try server.tandem("activities/invitations/lookup", ["invitation": .string(reference)], as: bob)
        }
        let (head, tail) = (real.code.prefix(4), real.code.suffix(4))
        let pasted = ["\(head)\u{2013}\(tail)", "\(head)\u{2014}\(tail)", "\(head)\u{2212}\(tail)", "\(head)\t\(tail)",
                      "\(real.code).", "\u{201C}\(real.code)\u{201D}", "(\(real.code.lowercased()))", " \(head) \(tail)\n", "\(real.url).", "<\(real.url)>"]
        for reference in pasted {
            let found = try lookup(reference)
            #expect(found.status == 200, "\(reference.debugDescription): \(found.text)")
        }
        let token = real.url.components(separatedBy: "/activity/")[1]
        let unreadable = [String(real.code.dropLast()), real.code + "Z", "\(head)-\(tail)-\(head)", "ABCD_EFGH", "",
                          real.url.replacingOccurrences(of: token, with: real.code), "act_abc", "act_", token + "x", String(token.dropLast()),
                          String(real.url.dropLast(10))]
        for _ in 0..<3 {
            for reference in unreadable {
                let refused = try lookup(reference)
                #expect(refused.status == 400 && refused.json["serverErrorCode"]?.stringValue == "BAD_REQUEST",
                        "\(reference.debugDescription): \(refused.text)")
            }
        }
        // 33 unreadable lookups took nothing: all 20 wrong codes of a full bucket are still answered.
        for _ in 0..<Int(ActivityInvitations.lookupBurst) {
            let wrong = try lookup(Self.guess())
            #expect(wrong.status == 404, "\(wrong.text)")
        }
    }

    /// Seed behaviour: `"lifetime": null` made a day-long invitation, as if the key were absent.
    /// Now a lifetime is a whole number of seconds or absent (R43).
    @Test func aNullLifetimeIsRefused() throws {
        let server = try Self.server.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let conversation = try Self.conversation(server, ada, bob)
        let refused = try server.tandem("activities/invitations/create",
                                        ["conversationID": .string(conversation), "activity": Self.activity, "lifetime": .null], as: ada)
        #expect(refused.status == 400 && refused.json["serverErrorCode"]?.stringValue == "BAD_REQUEST", "\(refused.text)")
        #expect(refused.json["reason"]?.stringValue?.contains("lifetime") == true, "\(refused.text)")
    }

    /// Seed behaviour: `create` ignored keys it does not know (`lifetimes` for `lifetime` made a
    /// day-long invitation). Now any other key is `BAD_REQUEST` naming it (R42), as `POST account`.
    @Test func createRefusesUnknownKeys() throws {
        let server = try Self.server.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let conversation = try Self.conversation(server, ada, bob)
        let refused = try server.tandem("activities/invitations/create",
                                        ["conversationID": .string(conversation), "activity": Self.activity, "lifetimes": 60], as: ada)
        #expect(refused.status == 400 && refused.json["serverErrorCode"]?.stringValue == "BAD_REQUEST", "\(refused.text)")
        #expect(refused.json["reason"]?.stringValue?.contains("'lifetimes'") == true, "\(refused.text)")
        #expect(try Self.invitation(server, ada, in: conversation, lifetime: 60).code.count == 9, "the known keys still work")
    }

    /// Seed behaviour: a new invitation whose 40-bit join code was already another's failed the
    /// store's unique constraint and answered 500. Now the create draws a fresh token in the same
    /// transaction (R41). The collision is real: the store of the running server holds a row with
    /// the code of the first token the generator hands out; the invitation made with the second
    /// token works through the server, the seeded row keeps its code, and a generator that only
    /// collides ends in `TRY_AGAIN_LATER`.
    @Test func aTakenJoinCodeIsDrawnAgainInsideTheCreate() throws {
        let server = try Self.server.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let conversation = try Self.conversation(server, ada, bob)
        let store = try dataDirectoryStore(server.dataDirectory)
        defer { store.close() }
        let membership = ConversationService(store: store, hub: ConversationHub(streams: StreamRegistry(), bus: EventBus()))
        var invitations = ActivityInvitations(store: store, membership: membership, secret: Array(repeating: 7, count: 32))
        let taken = "act_taken_\(UUID().uuidString)", fresh = "act_fresh_\(UUID().uuidString)"
        let now = Clock.milliseconds()
        let seeded = StoredActivityInvitation(id: UUID().uuidString, container: TestServer.container, environment: .development,
                                              conversationID: conversation, creator: ada.recordName, activity: JSONWriter.string(Self.activity),
                                              createdAt: now, expiresAt: now + 3_600_000, revokedAt: nil)
        let seededCode = invitations.code(for: taken)
        #expect(try store.write { try $0.addActivityInvitation(seeded, tokenHash: Tokens.hash("act_seed_\(UUID().uuidString)"),
                                                                codeHash: Tokens.hash(seededCode)) })

        let drawn = Mutex([taken, fresh])
        invitations.newToken = { drawn.withLock { $0.removeFirst() } }
        let activity = try SessionActivity.parse(Self.activity)
        let made = try invitations.create(creator: ada.recordName, conversationID: conversation, activity: activity, lifetime: nil,
                                          container: TestServer.container, environment: .development)
        #expect(made.token == fresh && made.code == invitations.code(for: fresh) && made.code != seededCode)
        let found = try server.tandem("activities/invitations/lookup", ["invitation": .string(made.code)], as: bob)
        #expect(found.status == 200 && found.json["invitationID"]?.stringValue == made.invitation.id, "\(found.text)")
        let kept = try server.tandem("activities/invitations/lookup", ["invitation": .string(seededCode)], as: bob)
        #expect(kept.json["invitationID"]?.stringValue == seeded.id, "the seeded row keeps its code: \(kept.text)")

        invitations.newToken = { taken }
        do {
            _ = try invitations.create(creator: ada.recordName, conversationID: conversation, activity: activity, lifetime: nil,
                                       container: TestServer.container, environment: .development)
            Issue.record("a generator that only collides made an invitation")
        } catch let error as CloudKitError {
            #expect(error.code == .tryAgainLater && error.retryAfter == 1, "\(error)")
        }
    }
}
