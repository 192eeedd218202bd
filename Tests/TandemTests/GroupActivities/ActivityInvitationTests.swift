import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tandem
import TandemTestSupport
import Testing

/// Activity invitations through the SDK against a real `tandem serve` (issue 23 item 4;
/// decisions R19–R22): made by a member, opened by URL or join code (starting the session when
/// none is live, joining it otherwise), sent as a "Join" message, expiring, revoked by their
/// creator, and shown to anyone else only as the activity's fallback URL.
@Suite struct ActivityInvitationTests {
    let server = SessionServer.shared

    /// The error `body` throws, or a failure when it throws none.
    func failure(_ body: () async throws -> Void) async throws -> TandemError {
        do { try await body() } catch let error as TandemError { return error }
        throw TestFailure("expected an error")
    }

    @Test func openingStartsTheSessionWhenNoneIsLiveThenJoinsIt() async throws {
        let conversation = try await server.conversation(0, with: [1, 2])
        let clients = [server.container(0), server.container(1), server.container(2)]
        let invitation = try await clients[0].groupActivities.makeInvitation(for: Sketch(canvas: "invited"), in: conversation)
        #expect(invitation.url.path.hasPrefix("/activity/act_"))
        #expect(invitation.code.count == 9 && invitation.code.dropFirst(4).first == "-")
        #expect(invitation.conversationID == conversation && invitation.metadata.title == "Sketch invited")
        #expect(abs(invitation.expirationDate.timeIntervalSince(invitation.creationDate) - 86_400) < 0.01)

        // Nobody runs anything: the first to open by URL starts the activity (and initiated it).
        let first = try await clients[1].groupActivities.open(invitation: invitation.url.absoluteString, as: Sketch.self)
        #expect(first.conversationID == conversation && first.isLocallyInitiated)
        #expect(try first.activity() == Sketch(canvas: "invited"))
        try await first.join()
        // The next opens by code, typed in lower case without the dash: the same session.
        let code = invitation.code.replacingOccurrences(of: "-", with: "").lowercased()
        let second = try await clients[2].groupActivities.open(invitation: code, as: Sketch.self)
        #expect(second.id == first.id && !second.isLocallyInitiated)
        try await second.join()
        try await withTimeout(10) {
            for await participants in first.activeParticipantsUpdates() where participants.count == 2 { return }
        }
        // The opener's device now has the conversation active: eligible there.
        #expect(try await GroupStateObserver(clients[2].groupActivities).eligibility() == .init(isEligible: true, reason: nil,
                                                                                                 conversationID: conversation))
        // An invitation to another activity joins the live session all the same; asked as
        // Sketch it is refused as a conflict, the session is not replaced.
        let other = try await clients[0].groupActivities.makeInvitation(for: Doodle(), in: conversation)
        let conflict = try await failure { _ = try await clients[0].groupActivities.open(invitation: other.url.absoluteString, as: Doodle.self) }
        #expect(conflict.code == .activityConflict)
        #expect(first.state == .joined)
    }

    @Test func aJoinMessageCarriesTheInvitation() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let ada = server.container(0), bob = server.container(1)
        try await ada.conversations.send("hello https://example.com/items/1", in: conversation)
        let invitation = try await ada.groupActivities.makeInvitation(for: Sketch(canvas: "message"), in: conversation)
        let sent = try await ada.conversations.send(invitation, in: conversation)
        #expect(sent.text == "Join Sketch message")
        let page = try await bob.conversations.messages(in: conversation)
        let join = try #require(page.events.last(where: { $0.activityInvitation != nil })?.activityInvitation)
        #expect(join.url == invitation.url && join.title == "Sketch message")
        #expect(page.events.first { $0.text?.hasPrefix("hello") == true }.map { $0.activityInvitation == nil } == true,
                "a message without an invitation link has none")
        let session = try await bob.groupActivities.open(invitation: join.url.absoluteString, as: Sketch.self)
        #expect(session.conversationID == conversation)
    }

    @Test func expiredAndRevokedInvitationsDoNothing() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let ada = server.container(0).groupActivities, bob = server.container(1).groupActivities
        let brief = try await ada.makeInvitation(for: Sketch(canvas: "brief"), in: conversation, lifetime: 1)
        try await Task.sleep(nanoseconds: 1_300_000_000)
        let expired = try await failure { _ = try await bob.open(invitation: brief.url.absoluteString, as: Sketch.self) }
        let unknown = try await failure { _ = try await bob.open(invitation: "ZZZZ-ZZZZ", as: Sketch.self) }
        #expect(expired.code == .unknownItem && expired.message == unknown.message, "one answer (R40): \(expired.message)")

        let revocable = try await ada.makeInvitation(for: Sketch(canvas: "revocable"), in: conversation)
        #expect(try await bob.invitationPreview(revocable.code).canJoin)
        let notBobs = try await failure { try await bob.revokeInvitation(revocable) }
        #expect(notBobs.code == .unknownItem, "only the creator revokes")
        try await ada.revokeInvitation(revocable)
        let revoked = try await failure { _ = try await bob.open(invitation: revocable.code, as: Sketch.self) }
        #expect(revoked.code == .unknownItem && revoked.message == unknown.message, "one answer (R40): \(revoked.message)")
        let preview = try await failure { _ = try await bob.invitationPreview(revocable.url.absoluteString) }
        #expect(preview.code == .unknownItem)
        let again = try await failure { try await ada.revokeInvitation(revocable) }
        #expect(again.code == .unknownItem)
        let tooLong = try await failure { _ = try await ada.makeInvitation(for: Sketch(canvas: "x"), in: conversation, lifetime: 31 * 86_400) }
        #expect(tooLong.code == .invalidArguments)
    }

    /// Seed behaviour: `invitation.open` tried every code it was given. Now lookups over HTTP
    /// and opens on the stream take from one budget per person (R39): once wrong codes used it
    /// up, `open` is `requestRateLimited` with `retryAfterSeconds`, even with a right code.
    /// User 4 is this test's alone, so no other test is slowed.
    @Test func guessingCodesIsThrottledOnTheStreamToo() async throws {
        let conversation = try await server.conversation(0, with: [4])
        let ada = server.container(0).groupActivities, guesser = server.container(4).groupActivities
        let invitation = try await ada.makeInvitation(for: Sketch(canvas: "guessed"), in: conversation)
        var throttled: TandemError?
        for _ in 0..<60 where throttled == nil {
            let code = String((0..<8).map { _ in "0123456789ABCDEFGHJKMNPQRSTVWXYZ".randomElement()! })
            let error = try await failure { _ = try await guesser.invitationPreview(code) }
            if error.code == .requestRateLimited { throttled = error } else { #expect(error.code == .unknownItem) }
        }
        #expect(throttled != nil, "60 wrong codes were never throttled")
        let refused = try await failure { _ = try await guesser.open(invitation: invitation.code, as: Sketch.self) }
        #expect(refused.code == .requestRateLimited && (refused.retryAfterSeconds ?? 0) >= 1, "\(refused)")
    }

    @Test func aStrangerSeesOnlyTheFallbackURL() async throws {
        let conversation = try await server.conversation(0, with: [1])
        let ada = server.container(0).groupActivities, stranger = server.container(3).groupActivities
        let invitation = try await ada.makeInvitation(for: Sketch(canvas: "private"), in: conversation)
        let preview = try await stranger.invitationPreview(invitation.url.absoluteString)
        #expect(!preview.canJoin && preview.conversationID == nil && preview.invitationID == nil)
        #expect(preview.metadata.fallbackURL == URL(string: "https://example.com/sketch"))
        #expect(preview.metadata.title == nil && preview.metadata.type == .createTogether)
        let refused = try await failure { _ = try await stranger.open(invitation: invitation.code, as: Sketch.self) }
        #expect(refused.code == .permissionFailure)
        let notTheirs = try await failure { _ = try await stranger.makeInvitation(for: Sketch(canvas: "x"), in: conversation) }
        #expect(notTheirs.code == .unknownItem, "only members make invitations; the conversation stays hidden")

        // Signed out, the link's page shows the code, the link and the fallback; never the title.
        let (data, response) = try await URLSession.shared.data(for: URLRequest(url: invitation.url))
        let html = String(decoding: data, as: UTF8.self)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Content-Security-Policy")?.contains("default-src 'none'") == true)
        #expect(html.contains(invitation.code) && html.contains("href=\"https://example.com/sketch\""))
        #expect(!html.contains("Sketch private") && !html.contains(conversation))
        #expect(try scannedQRCode(in: html) == invitation.url.absoluteString, "the QR code reads back as the link (R38)")
        try await ada.revokeInvitation(invitation)
        let (_, gone) = try await URLSession.shared.data(for: URLRequest(url: invitation.url))
        #expect((gone as? HTTPURLResponse)?.statusCode == 404)
    }
}

/// What a real QR reader (zbar's `zbarimg`, Debian `zbar-tools`) reads from the page's inline SVG
/// code: its `M{x} {y}h1v1h-1z` squares become a PBM image at 4 pixels a module.
func scannedQRCode(in html: String) throws -> String {
    let svg = try #require(html.range(of: "<svg id=\"qr\"").map { String(html[$0.lowerBound...]) }, "the page has no QR code")
    let viewBox = try #require(svg.firstMatch(of: /viewBox="0 0 (\d+) \d+"/).flatMap { Int($0.1) })
    let d = try #require(svg.firstMatch(of: /<path fill="#000" d="([^"]*)"/).map { String($0.1) })
    var dark = Set<Int>()
    for square in d.matches(of: /M(\d+) (\d+)h1v1h-1z/) { dark.insert(Int(square.2)! * viewBox + Int(square.1)!) }
    let scale = 4, side = viewBox * scale
    var pbm = "P1\n\(side) \(side)\n"
    for y in 0..<side {
        pbm += (0..<side).map { dark.contains((y / scale) * viewBox + $0 / scale) ? "1" : "0" }.joined(separator: " ") + "\n"
    }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pbm")
    try pbm.write(to: file, atomically: true, encoding: .ascii)
    defer { try? FileManager.default.removeItem(at: file) }
    let reader = Process(), output = Pipe()
    reader.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
    reader.arguments = ["--raw", "--quiet", "-Sqrcode.enable", file.path]
    reader.standardOutput = output
    reader.standardError = FileHandle.nullDevice   // zbar warns that it has no D-Bus; the text is on stdout
    try reader.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    reader.waitForTermination()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A second activity, for the conflict case.
struct Doodle: GroupActivity, Equatable {
    static let activityIdentifier = "com.example.doodle"
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "Doodle") }
}
