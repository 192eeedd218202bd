import Foundation
import TandemCore
import TandemServer
import TandemStore

/// `tandem user list|show|verify`, `tandem token list|revoke`, and the sign-in flags of `tandem serve`.
enum AccountCommand {
    static let usage = """
          tandem user list [--data DIR]
          tandem user show EMAIL_OR_USER_RECORD_NAME [--data DIR]
          tandem user verify EMAIL [--data DIR]   (marks the email verified; completes a pending sign-up)
          tandem user remove EMAIL_OR_USER_RECORD_NAME --yes [--data DIR]   (deletes the account, its private data and sessions; ends its shares)
          tandem token list --user EMAIL_OR_USER_RECORD_NAME [--data DIR]
          tandem token revoke --user EMAIL_OR_USER_RECORD_NAME (--session ID | --all) [--data DIR]
          tandem token create --admin [--expires DURATION] [--data DIR]   (schema and links administration; DURATION: 3600, 90m, 12h, 30d)
          tandem token list --admin [--data DIR]
          tandem token revoke --admin ID [--data DIR]   (ID from token list --admin; applies at once)
        """

    static let serveUsage = """
                       [--password-hash m=19456,t=2,p=1]   (Argon2id cost: KiB, passes, lanes; older hashes upgrade at sign-in)
                       [--session-idle SECONDS] [--session-lifetime SECONDS]   (web auth tokens; default 14 and 90 days)
                       [--link-lifetime SECONDS]   (emailed sign-up and password-reset links; default 86400, 24 hours)
                       [--sign-in-attempts 5,50,900]   (failed sign-ins per account, per address, in SECONDS; sign-ups per address: 20, or half the address figure when given)
                       [--smtp-url smtp://host:587|smtps://host:465] [--smtp-from noreply@example.com] [--smtp-user U --smtp-password P]
                                  (sign-up, password-reset and share invitation emails; without --smtp-url nothing is sent)
                       [--mail-templates DIR]   (optional files replacing the built-in emails; each may start "Subject: ..." and an empty line:
                                  invitation.txt {{inviter}} {{title}} {{url}}, signup.txt {{link}}, reset.txt {{link}}, already-registered.txt)
        \(OIDCCommand.serveUsage)
                       [--passkey-rp-id example.com] [--passkey-user-verification required|preferred]
                                  (passkeys: RP ID default the host of --public-url or of each request; the origin is the server's own)
        """

    /// Applies the sign-in flags of `tandem serve`.
    static func configure(_ settings: inout AccountSettings, _ options: Options) throws {
        if let hash = options.value("password-hash") {
            guard AccountSettings.isValidPasswordHash(hash) else {
                throw UsageError("--password-hash must be m=KIB,t=PASSES,p=LANES (m at least 8 per lane)")
            }
            settings.passwordHash = hash
        }
        func seconds(_ flag: String) throws -> Int64? {
            guard let value = options.value(flag) else { return nil }
            guard let n = Int64(value), n > 0 else { throw UsageError("--\(flag) must be a positive number of seconds") }
            return n
        }
        if let n = try seconds("session-idle") { settings.sessionIdleSeconds = n }
        if let n = try seconds("session-lifetime") { settings.sessionLifetimeSeconds = n }
        if let n = try seconds("link-lifetime") { settings.linkLifetimeSeconds = n }
        if let url = options.value("smtp-url") {
            guard url.hasPrefix("smtp://") || url.hasPrefix("smtps://") else { throw UsageError("--smtp-url must start with smtp:// or smtps://") }
            settings.smtpURL = url
        }
        if let from = options.value("smtp-from") {
            guard from.contains("@"), from.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                throw UsageError("--smtp-from must be an email address")
            }
            settings.smtpFrom = from
        }
        try OIDCCommand.configure(&settings.oidc, options)
        if let directory = options.value("mail-templates") {
            do {
                settings.mailTemplates = try MailTemplates.load(directory: directory)
            } catch {
                throw UsageError("--mail-templates: \(error)")
            }
        }
        settings.smtpUsername = options.value("smtp-user")
        settings.smtpPassword = options.value("smtp-password")
        if let rpID = options.value("passkey-rp-id") {
            guard !rpID.isEmpty, rpID.contains(where: \.isLetter), rpID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) else {
                throw UsageError("--passkey-rp-id must be a domain name, e.g. example.com")
            }
            settings.passkeyRPID = rpID.lowercased()
        }
        switch options.value("passkey-user-verification") {
        case nil, "required"?: break
        case "preferred"?: settings.passkeyUserVerification = false
        default: throw UsageError("--passkey-user-verification must be required or preferred")
        }
        if let attempts = options.value("sign-in-attempts") {
            let numbers = attempts.split(separator: ",").compactMap { Int($0) }
            guard numbers.count == 3, numbers.allSatisfy({ $0 > 0 }) else {
                throw UsageError("--sign-in-attempts must be PER_ACCOUNT,PER_ADDRESS,WINDOW_SECONDS, e.g. 5,50,900")
            }
            settings.attemptsPerAccount = numbers[0]
            settings.attemptsPerAddress = numbers[1]
            settings.signUpsPerAddress = max(numbers[1] / 2, 1)
            settings.attemptWindowSeconds = Int64(numbers[2])
        }
    }

    /// Runs `user list|show|verify` and `token list|revoke`; nil when the words are not one of them.
    static func run(_ options: Options, store: StoreLocation) throws -> Int32? {
        let words = options.words
        switch (words.first, words.dropFirst().first, words.count) {
        case ("token", "create", 2) where options.flag("admin"):
            let seconds = try options.value("expires").map(duration)
            print(try CommandLine.withStore(store) { try Admin.createAdminToken(expiresAfterSeconds: seconds, store: $0) })
        case ("token", "list", 2) where options.flag("admin"):
            let now = Clock.milliseconds()
            for token in try CommandLine.withStore(store, { try AccountAdmin.adminTokens(store: $0) }) {
                let state = token.refusal(at: now).map { $0.kind == .revoked ? "revoked" : "expired" } ?? "active"
                print([token.id, state, "created=\(stamp(token.createdAt))", "expires=\(token.expiresAt.map(stamp) ?? "never")"]
                    .joined(separator: "\t"))
            }
        case ("token", "revoke", 3) where options.flag("admin"):
            try CommandLine.withStore(store) { try AccountAdmin.revokeAdminToken(words[2], store: $0) }
            print("revoked admin token \(words[2])")
        case ("token", _, _) where options.flag("admin"):
            throw UsageError("admin tokens: token create --admin [--expires DURATION] | token list --admin | token revoke --admin ID")
        case ("user", "list", 2):
            for profile in try CommandLine.withStore(store, existing: true, { try AccountAdmin.list(store: $0) }) { print(line(profile)) }
        case ("user", "show", 3):
            let (profile, methods, sessions) = try CommandLine.withStore(store) { try AccountAdmin.show(words[2], store: $0) }
            print(line(profile))
            print("sign-in methods: \(methods.isEmpty ? "none" : methods.joined(separator: ", "))")
            print("sessions: \(sessions.count)")
        case ("user", "remove", 3):
            guard options.flag("yes") else {
                throw UsageError("user remove deletes \(words[2])'s account, private zones and records in every container: add --yes to do it")
            }
            let report = try CommandLine.withStore(store) { try AccountAdmin.remove(words[2], store: $0) }
            print("removed \(words[2]): \(report.summary)")
        case ("user", "verify", 3):
            let profile = try CommandLine.withStore(store) { try AccountAdmin.verify(words[2], store: $0) }
            print(line(profile))
        case ("token", "list", 2):
            guard let user = options.value("user") else { throw UsageError("token list needs --user EMAIL_OR_USER_RECORD_NAME") }
            for session in try CommandLine.withStore(store, { try AccountAdmin.sessions(of: user, store: $0) }) {
                let fields = [session.id, session.container ?? "all-containers", "created=\(stamp(session.createdAt))",
                              "last-used=\(stamp(session.session.lastUsedAt ?? session.createdAt))",
                              "expires=\(session.session.expiresAt.map(stamp) ?? "never")", "device=\(session.session.device ?? "-")"]
                print(fields.joined(separator: "\t"))
            }
        case ("token", "revoke", 2):
            guard let user = options.value("user") else { throw UsageError("token revoke needs --user EMAIL_OR_USER_RECORD_NAME") }
            let id = options.value("session")
            guard (id == nil) == options.flag("all") else { throw UsageError("token revoke needs either --session ID or --all") }
            let count = try CommandLine.withStore(store) { try AccountAdmin.revoke(user, session: id, store: $0) }
            print("revoked \(count) session\(count == 1 ? "" : "s") (a running server stops accepting them within 30 seconds)")
        default:
            return nil
        }
        return 0
    }

    /// Seconds in `3600`, `90s`, `90m`, `12h` or `30d`.
    static func duration(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let unit = text.last.flatMap { units[$0] }
        let digits = unit == nil ? Substring(text) : text.dropLast()
        guard let n = Int64(digits), n > 0, n <= Int64.max / 86_400_000 else {
            throw UsageError("--expires must be a positive duration: 3600, 90s, 90m, 12h or 30d")
        }
        return n * (unit ?? 1)
    }

    static func line(_ profile: AccountProfile) -> String {
        [profile.recordName, profile.email ?? "-", profile.emailVerified ? "verified" : "unverified", profile.displayName ?? "-"]
            .joined(separator: "\t")
    }

    static func stamp(_ milliseconds: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
