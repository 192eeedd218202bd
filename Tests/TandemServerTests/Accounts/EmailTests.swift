import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Sign-up and password-reset emails over SMTP (libcurl) to a real SMTP server on loopback
/// (aiosmtpd, Tests/Mail/smtp_sink.py), read back and followed (issue 16, A4, A11).
@Suite("Account email")
struct EmailTests {
    /// One sink and one server sending to it, for the suite.
    final class World: @unchecked Sendable {
        let sink: SMTPSink
        let server: TestServer
        let app: String

        init() throws {
            sink = try SMTPSink()
            server = try TestServer(extraArguments: TestServer.cheapHash + ["--smtp-url", "smtp://127.0.0.1:\(sink.port)",
                                                                              "--smtp-from", "accounts@tandem.example"])
            app = try server.apiToken(origins: ["https://app.example"])
        }
    }

    static let lock = NSLock()
    nonisolated(unsafe) static var shared: World?
    static func world() throws -> World {
        lock.lock()
        defer { lock.unlock() }
        if let shared { return shared }
        let made = try World()
        shared = made
        return made
    }

    @Test func signUpLinkArrivesByEmailAndFollowingItOnThePageCreatesTheAccountOnce() throws {
        let world = try Self.world()
        let server = world.server
        let email = "\(unique("mailed"))@example.com".lowercased()
        let signUp = try server.auth("signup", ["email": .string(email), "password": "mailed password", "name": "Mae Jemison"], apiToken: world.app)
        #expect(signUp.json["status"] == "CHECK_EMAIL", "\(signUp.text)")
        let mail = try world.sink.message(to: email)
        #expect(mail.contains("From: accounts@tandem.example") && mail.contains("Subject: Confirm your email address"), "\(mail)")
        let link = try #require(SMTPSink.link(in: mail), "\(mail)")
        #expect(link.hasPrefix(server.baseURL + "/signin/verify?ckAPIToken="))

        // The link's page (GET) changes nothing; its form (POST, with the CSRF token) creates the account.
        let page = try server.request("GET", link, token: .some(nil))
        #expect(page.status == 200 && page.text.contains("action=\"/signin/verify\""), "\(page.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email = '\(email)'") == "0")
        let form = try FormPage(page)
        let confirmed = try form.post(server, "/signin/verify", ["token": try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value)])
        #expect(confirmed.status == 200 && confirmed.text.contains("Your email is confirmed"), "\(confirmed.text)")
        #expect(try server.sqlite("SELECT email_verified, display_name FROM users WHERE email = '\(email)'") == "1|Mae Jemison")
        _ = try server.signIn(email, password: "mailed password", apiToken: world.app)
        // A link works once.
        let again = try form.post(server, "/signin/verify", ["token": URLComponents(string: link)!.queryItems!.first { $0.name == "token" }!.value!])
        #expect(again.status == 410 && again.text.contains("used already"), "\(again.status)")

        // Signing up again with the address: the owner is told, and the message holds no link.
        _ = try server.auth("signup", ["email": .string(email), "password": "someone else"], apiToken: world.app)
        let notice = try world.sink.message(to: email, after: mail)
        #expect(notice.contains("Subject: You already have an account") && SMTPSink.link(in: notice) == nil, "\(notice)")
    }

    @Test func aRivalSignUpLinkForTheSameEmailIsVoidOnceTheAccountExists() throws {
        let world = try Self.world()
        let server = world.server
        let email = "\(unique("rival"))@example.com".lowercased()
        _ = try server.auth("signup", ["email": .string(email), "password": "owner password"], apiToken: world.app)
        let ownerMail = try world.sink.message(to: email)
        _ = try server.auth("signup", ["email": .string(email), "password": "attacker password"], apiToken: world.app)
        let rivalMail = try world.sink.message(to: email, after: ownerMail)
        func secret(_ mail: String) throws -> String {
            let link = try #require(SMTPSink.link(in: mail), "\(mail)")
            return try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value)
        }
        let owner = try server.auth("verify", ["token": .string(try secret(ownerMail))], apiToken: world.app)
        #expect(owner.status == 200, "\(owner.text)")
        let rival = try server.auth("verify", ["token": .string(try secret(rivalMail))], apiToken: world.app)
        #expect(rival.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(rival.status) \(rival.text)")
        _ = try server.signIn(email, password: "owner password", apiToken: world.app)
        #expect(throws: (any Error).self) { try server.signIn(email, password: "attacker password", apiToken: world.app) }
    }

    @Test func passwordResetLinkSetsANewPasswordAndSignsEverySessionOut() throws {
        let world = try Self.world()
        let server = world.server
        let email = "\(unique("forgetful"))@example.com".lowercased()
        try server.signUpVerified(email, password: "old password", apiToken: world.app)
        let session = try server.signIn(email, password: "old password", apiToken: world.app)
        let unknown = try server.auth("password/reset", ["email": .string("\(unique("nobody"))@example.com")], apiToken: world.app)
        let known = try server.auth("password/reset", ["email": .string(email)], apiToken: world.app)
        #expect(known.status == 200 && known.text == unknown.text, "\(known.text) / \(unknown.text)")
        let mail = try world.sink.message(to: email, subject: "Reset your password")
        let link = try #require(SMTPSink.link(in: mail), "\(mail)")
        #expect(link.hasPrefix(server.baseURL + "/signin/password?ckAPIToken="))
        let secret = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value)
        // A too-short password is refused and the link stays usable.
        let short = try server.auth("password/set", ["token": .string(secret), "password": "short"], apiToken: world.app)
        #expect(short.json.serverErrorCode == "BAD_REQUEST", "\(short.text)")
        let set = try server.auth("password/set", ["token": .string(secret), "password": "new password"], apiToken: world.app)
        #expect(set.status == 200 && set.json["emailVerified"] == true, "\(set.text)")
        #expect(try server.currentUser(session) == "AUTHENTICATION_FAILED")
        let old = try server.auth("signin", ["email": .string(email), "password": "old password", "consent": true], apiToken: world.app)
        #expect(old.json.serverErrorCode == "AUTHENTICATION_FAILED")
        _ = try server.signIn(email, password: "new password", apiToken: world.app)
        let reused = try server.auth("password/set", ["token": .string(secret), "password": "third password"], apiToken: world.app)
        #expect(reused.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(reused.text)")
    }
}

/// Emailed links that cannot be followed any more say why, on the page and in the JSON API, and
/// change nothing (A46; QA): expired (`--link-lifetime` makes them expire in a second here) or
/// used already.
@Suite("Account email: expired and used links")
struct EmailLinkRefusalTests {
    static func secret(_ mail: String) throws -> (link: String, secret: String) {
        let link = try #require(SMTPSink.link(in: mail), "\(mail)")
        return (link, try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value))
    }

    @Test func anExpiredLinkIsRefusedOnThePageAndInTheAPI() throws {
        let sink = try SMTPSink()
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--smtp-url", "smtp://127.0.0.1:\(sink.port)", "--link-lifetime", "2"])
        let app = try server.apiToken(origins: ["https://app.example"])
        let newcomer = "\(unique("late"))@example.com".lowercased()
        let member = "\(unique("forgetful"))@example.com".lowercased()
        try TestServer.admin(["user", "add", "--email", member, "--data", server.dataDirectory])
        // The two links are made back to back: making a link forgets those already expired, so a
        // first link made more than a lifetime before the second would be unknown, not expired.
        _ = try server.auth("signup", ["email": .string(newcomer), "password": "late password"], apiToken: app)
        _ = try server.auth("password/reset", ["email": .string(member)], apiToken: app)
        let verify = try Self.secret(try sink.message(to: newcomer))
        let reset = try Self.secret(try sink.message(to: member))
        Thread.sleep(forTimeInterval: 2.5)

        for (link, name) in [(verify.link, "sign-up"), (reset.link, "reset")] {
            let page = try server.request("GET", link, token: .some(nil))
            #expect(page.status == 410 && page.text.contains("expired") && !page.text.contains("<form"), "\(name): \(page.status) \(page.text)")
        }
        let verified = try server.auth("verify", ["token": .string(verify.secret)], apiToken: app)
        #expect(verified.status == 401 && verified.json["tandemReason"] == "LINK_EXPIRED" && verified.text.contains("expired"), "\(verified.text)")
        let set = try server.auth("password/set", ["token": .string(reset.secret), "password": "a new password"], apiToken: app)
        #expect(set.status == 401 && set.json["tandemReason"] == "LINK_EXPIRED" && set.text.contains("new password reset link"), "\(set.text)")
        // The page's form (POST) says the same, and nothing was created or changed.
        let form = try FormPage(try server.request("GET", server.baseURL + "/signin/reset?ckAPIToken=" + app, token: .some(nil)))
        let posted = try form.post(server, "/signin/verify", ["token": verify.secret])
        #expect(posted.status == 410 && posted.text.contains("expired"), "\(posted.status) \(posted.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email = '\(newcomer)'") == "0")
        #expect(try server.sqlite("SELECT count(*) FROM sign_in_methods m JOIN users u ON u.record_name = m.user_record_name WHERE u.email = '\(member)'") == "0")
    }

    @Test func aUsedLinkCannotBeReplayed() throws {
        let world = try EmailTests.world()
        let server = world.server
        let email = "\(unique("once"))@example.com".lowercased()
        _ = try server.auth("signup", ["email": .string(email), "password": "only once"], apiToken: world.app)
        let verify = try Self.secret(try world.sink.message(to: email))
        #expect(try server.auth("verify", ["token": .string(verify.secret)], apiToken: world.app).status == 200)
        let replayed = try server.auth("verify", ["token": .string(verify.secret)], apiToken: world.app)
        #expect(replayed.status == 401 && replayed.json["tandemReason"] == "LINK_USED" && replayed.text.contains("used already"), "\(replayed.text)")
        let page = try server.request("GET", verify.link, token: .some(nil))
        #expect(page.status == 410 && page.text.contains("used already"), "\(page.status) \(page.text)")

        _ = try server.auth("password/reset", ["email": .string(email)], apiToken: world.app)
        let reset = try Self.secret(try world.sink.message(to: email, subject: "Reset your password"))
        #expect(try server.auth("password/set", ["token": .string(reset.secret), "password": "second password"], apiToken: world.app).status == 200)
        let again = try server.auth("password/set", ["token": .string(reset.secret), "password": "third password"], apiToken: world.app)
        #expect(again.json["tandemReason"] == "LINK_USED", "\(again.text)")
        let resetPage = try server.request("GET", reset.link, token: .some(nil))
        #expect(resetPage.status == 410 && resetPage.text.contains("used already"), "\(resetPage.status) \(resetPage.text)")
        _ = try server.signIn(email, password: "second password", apiToken: world.app)
        // A link nobody sent is unknown, not expired or used.
        let unknown = try server.auth("verify", ["token": "never-sent"], apiToken: world.app)
        #expect(unknown.status == 401 && unknown.json["tandemReason"] == nil && unknown.text.contains("unknown"), "\(unknown.text)")
    }
}

/// A form page's CSRF cookie and field, to post its forms as the browser would.
struct FormPage {
    var cookie: String
    var csrf: String
    var apiToken: String

    init(_ page: TestServer.Response) throws {
        guard let cookie = page.headers["set-cookie"]?.split(separator: ";").first.map(String.init),
              let csrf = page.text.range(of: #"name="csrf" value=""#).map({ String(page.text[$0.upperBound...].prefix(64)) }),
              let api = page.text.range(of: #"name="ckAPIToken" value=""#).map({ String(page.text[$0.upperBound...].prefix { $0 != "\"" }) }) else {
            throw TestFailure("no form on the page: \(page.text)")
        }
        self.cookie = cookie
        self.csrf = csrf
        apiToken = api
    }

    func post(_ server: TestServer, _ path: String, _ fields: [String: String]) throws -> TestServer.Response {
        var all = fields
        all["csrf"] = csrf
        all["ckAPIToken"] = apiToken
        let body = all.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        return try server.request("POST", server.baseURL + path, body: Data(body.utf8), token: .some(nil),
                                  headers: ["Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie])
    }
}

/// Tests/Mail/smtp_sink.py running under .build/smtp-venv (`scripts/bootstrap --test`).
final class SMTPSink: @unchecked Sendable {
    let directory = NSTemporaryDirectory() + "tandem-mail-" + UUID().uuidString
    let process = Process()
    private let input = Pipe()
    private(set) var port = 0

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    init() throws {
        let python = Self.root.appendingPathComponent(".build/smtp-venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("no \(python): run scripts/bootstrap --test (installs aiosmtpd)")
        }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.root.appendingPathComponent("Tests/Mail/smtp_sink.py").path, directory]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        ExitCleanup.terminateAtExit(process)
        ExitCleanup.removeAtExit(directory)
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw TestFailure("the SMTP sink did not start") }
        self.port = port
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitForTermination()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The newest message to `address` (other than `after`, with `subject` when given), waiting up to 20 s for it.
    func message(to address: String, after previous: String? = nil, subject: String? = nil) throws -> String {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
            for name in names.reversed() {
                let text = (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
                if text.contains("X-Envelope-To: \(address)") && text != previous && subject.map({ text.contains("Subject: " + $0) }) ?? true {
                    return text
                }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw TestFailure("no email to \(address) within 20 s")
    }

    /// The first http(s) URL in a message.
    static func link(in message: String) -> String? {
        message.split(whereSeparator: { $0.isWhitespace }).first { $0.hasPrefix("http://") || $0.hasPrefix("https://") }.map(String.init)
    }
}
