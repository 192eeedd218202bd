import Foundation
import Testing
import TandemCore
@testable import TandemServer
import TandemTestSupport

/// Emailed sign-up and reset links never point at a Host the client made up (A38): without
/// `--public-url`, only a Host naming this machine is used; otherwise nothing is mailed, so a
/// forged Host cannot send a person a link that hands its secret to another server.
@Suite struct MailLinkHostTests {
    /// (Host header, trusted for emailed links without --public-url)
    static let hosts: [(String, Bool)] = [
        ("localhost", true), ("localhost:8080", true), ("LOCALHOST:8080", true), ("127.0.0.1", true), ("127.0.0.1:8080", true),
        ("127.1.2.3:80", true), ("[::1]", true), ("[::1]:8080", true),
        ("evil.example", false), ("evil.example:8080", false), ("localhost.evil.example", false), ("127.0.0.1.evil.example", false),
        ("evil.example#localhost", false), ("localhost:8080@evil.example", false), ("localhost:", false), ("localhost:80x", false),
        ("127.0.0.256", false), ("127.0.0", false), ("128.0.0.1", false), ("0.0.0.0", false), ("10.0.0.1", false),
        ("[::2]:8080", false), ("[::1]evil", false), ("[::1", false), ("", false),
        ("127.000.0.01", true), ("Localhost", true), ("127.0.0.1.", false), ("127..0.1", false), ("localhos", false),
        ("[::1]:", false), ("127.0.0.1:", false), (":8080", false), ("127.0.0.1.1", false), ("1270.0.0.1", false),
        // A digit with a combining mark is one Character that sorts between "0" and "9": the
        // Character-wise check took it for a digit and crashed on `Int(_:)!` (E17).
        ("127.0.0.1\u{301}", false), ("127.0.0.1\u{301}:8080", false), ("localhost:80\u{301}", false), ("LOCALHOST\u{301}", false),
    ]

    @Test(arguments: hosts)
    func onlyALoopbackHostIsTrustedForEmailedLinks(host: String, trusted: Bool) {
        #expect(RequestContext.isLoopbackHost(host) == trusted, "\(host)")
    }

    /// A reset and a sign-up asked for with a forged Host mail nothing; the same asked for at
    /// localhost mail a link to localhost. The mailer sends in order, so once the later message
    /// arrived, the earlier one would have too.
    @Test func aForgedHostGetsNoResetOrSignUpLinkMailed() throws {
        let world = try EmailTests.world()
        let server = world.server
        let victim = "\(unique("victim"))@example.com".lowercased()
        try TestServer.admin(["user", "add", "--email", victim, "--data", server.dataDirectory])
        let newcomer = "\(unique("newcomer"))@example.com".lowercased()
        let app = "?ckAPIToken=" + (world.app.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")

        for host in ["evil.example", "localhost.evil.example:\(server.port)"] {
            #expect(try Self.post(server, "password/reset" + app, ["email": victim], host: host).contains("CHECK_EMAIL"))
            #expect(try Self.post(server, "signup" + app, ["email": newcomer, "password": "forged host"], host: host).contains("CHECK_EMAIL"))
        }
        let local = "localhost:\(server.port)"
        _ = try Self.post(server, "password/reset" + app, ["email": victim], host: local)
        _ = try Self.post(server, "signup" + app, ["email": newcomer, "password": "right host"], host: local)
        let reset = try world.sink.message(to: victim)
        let signUp = try world.sink.message(to: newcomer)
        #expect(SMTPSink.link(in: reset)?.hasPrefix("http://\(local)/signin/password?") == true, "\(reset)")
        #expect(SMTPSink.link(in: signUp)?.hasPrefix("http://\(local)/signin/verify?") == true, "\(signUp)")
        let all = try FileManager.default.contentsOfDirectory(atPath: world.sink.directory).filter { $0.hasSuffix(".eml") }
            .map { try String(contentsOfFile: world.sink.directory + "/" + $0, encoding: .utf8) }
            .filter { $0.contains("X-Envelope-To: \(victim)") || $0.contains("X-Envelope-To: \(newcomer)") }
        #expect(all.count == 2 && !all.contains { $0.contains("evil.example") }, "\(all)")
    }

    /// A share invitation carries the share URL: built from a forged Host it would send the
    /// invitee to another server, so it follows the same rule as the links above (A45; QA: the
    /// invitation used the Host header). A save made with a forged Host invites the person but
    /// mails nothing; one made at localhost mails a localhost share URL.
    @Test func aForgedHostNeverReachesAnInvitationEmail() throws {
        let world = try ShareInvitationTests.world()
        let server = world.server
        let owner = try server.person("owner")
        let invitee = "\(unique("forged-invitee"))@example.com".lowercased()
        let marker = "\(unique("marker"))@example.com".lowercased()
        let note = try server.shareNote(owner: owner)
        func save(_ participants: [JSONValue], host: String) throws -> String {
            let share = try server.shareRecord(note, as: owner)
            let body = Body.modify([Body.operation("update", name: note.shareName, recordType: nil, tag: share["recordChangeTag"]?.stringValue,
                                                   fields: [:], extra: ["participants": .array(participants)])], zone: note.zone)
            return try Self.curl(server.databaseURL("records/modify"), body: body, token: owner.token, host: host)
        }
        for host in ["evil.example", "localhost.evil.example:\(server.port)"] {
            let saved = try save([Invite.address(invitee)], host: host)
            #expect(saved.contains("\"recordName\":\"\(note.shareName)\"") && !saved.contains("serverErrorCode"), "\(saved)")
        }
        let local = "localhost:\(server.port)"
        _ = try save([Invite.address(invitee), Invite.address(marker)], host: local)
        let mail = try world.sink.message(to: marker)
        #expect(SMTPSink.link(in: mail) == "http://\(local)/share/\(note.guid)", "\(mail)")
        #expect(world.messages(to: invitee).isEmpty, "the invitee was invited with a forged Host only: not mailed")
        let sent = try FileManager.default.contentsOfDirectory(atPath: world.sink.directory).filter { $0.hasSuffix(".eml") }
            .map { try String(contentsOfFile: world.sink.directory + "/" + $0, encoding: .utf8) }
        #expect(!sent.contains { $0.contains("evil.example") }, "no message names the forged Host")
    }

    /// POSTs JSON with a bearer token and the given Host header (curl sends it as is).
    static func curl(_ url: String, body: JSONValue, token: String, host: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-H", "Host: \(host)", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                             "--data-binary", String(decoding: JSONWriter.bytes(body), as: UTF8.self), url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitForTermination()
        return String(decoding: data, as: UTF8.self)
    }

    /// POSTs JSON to `/auth/1/{container}/{path}` with the given Host header (curl sends it as is).
    static func post(_ server: TestServer, _ path: String, _ body: [String: String], host: String) throws -> String {
        let json = try JSONSerialization.data(withJSONObject: body)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-H", "Host: \(host)", "-H", "Content-Type: application/json", "--data-binary", String(decoding: json, as: UTF8.self),
                             "\(server.baseURL)/auth/1/\(TestServer.container)/\(path)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitForTermination()
        return String(decoding: data, as: UTF8.self)
    }
}
