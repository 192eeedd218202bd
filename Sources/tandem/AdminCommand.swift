import Foundation
import TandemCore
import TandemServer
import TandemStore

/// `tandem admin add|list|remove`: server administrators, who sign in to the web console
/// (`/console/`; decisions C1), and `tandem token list|revoke --api` for API tokens.
enum AdminCommand {
    static let usage = """
          tandem admin add EMAIL [--password-stdin] [--data DIR]   (a console administrator; new accounts need a password,
                                  asked on the terminal or read from standard input; never a default one)
          tandem admin list [--data DIR]
          tandem admin remove EMAIL [--data DIR]   (the account stays; its console sessions stop)
          tandem token list --api --container ID [--data DIR]
          tandem token revoke --api ID --container ID [--data DIR]
        """

    /// Runs the commands above; nil when the words are not one of them.
    static func run(_ options: Options, store: StoreLocation) throws -> Int32? {
        let words = options.words
        switch (words.first, words.dropFirst().first, words.count) {
        case ("admin", "add", 3):
            let email = words[2]
            let needsPassword = try CommandLine.withStore(store) { store in
                try store.read { reader in
                    guard let user = try reader.user(recordNameOrEmail: email) else { return true }
                    return try !reader.signInMethods(user: user.recordName).contains { $0.kind == "password" }
                }
            }
            var password: String?
            if options.flag("password-stdin") {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw UsageError("--password-stdin: no password on standard input") }
                password = line
            } else if needsPassword {
                password = try askPassword()
            }
            let added = try CommandLine.withStore(store) {
                try ConsoleAdmin.add(email: email, password: password, passwordHash: options.value("password-hash"), store: $0)
            }
            let what = added.created ? "created account" : "account"
            print("\(what) \(added.profile.email ?? email) (\(added.profile.recordName)) is a server administrator"
                  + (added.passwordSet ? "" : "; its password is unchanged"))
        case ("admin", "list", 2):
            for profile in try CommandLine.withStore(store, { try ConsoleAdmin.list(store: $0) }) { print(AccountCommand.line(profile)) }
        case ("admin", "remove", 3):
            try CommandLine.withStore(store) { try ConsoleAdmin.remove(words[2], store: $0) }
            print("\(words[2]) is no longer a server administrator")
        case ("admin", _, _):
            throw UsageError("admin commands: admin add EMAIL [--password-stdin] | admin list | admin remove EMAIL")
        case ("token", "list", 2) where options.flag("api"):
            guard let container = options.value("container") else { throw UsageError("token list --api needs --container ID") }
            for token in try CommandLine.withStore(store, { try AccountAdmin.apiTokens(container: container, store: $0) }) {
                print([token.id, token.revokedAt == nil ? "active" : "revoked", "origins=\(token.origins.isEmpty ? "-" : token.origins.joined(separator: ","))",
                       "callback=\(token.callback ?? "message")", "created=\(AccountCommand.stamp(token.createdAt))"].joined(separator: "\t"))
            }
        case ("token", "revoke", 3) where options.flag("api"):
            guard let container = options.value("container") else { throw UsageError("token revoke --api needs --container ID") }
            try CommandLine.withStore(store) { try AccountAdmin.revokeAPIToken(container: container, id: words[2], store: $0) }
            print("revoked API token \(words[2]) (a running server stops accepting it within 30 seconds)")
        default:
            return nil
        }
        return 0
    }

    /// Reads a password twice from the terminal without echo (`getpass(3)` opens /dev/tty).
    static func askPassword() throws -> String {
        guard isatty(0) != 0 || FileManager.default.isReadableFile(atPath: "/dev/tty"), let first = getpass("Password: ") else {
            throw UsageError("no terminal to ask for a password: pipe it with --password-stdin")
        }
        let password = String(cString: first)
        guard let second = getpass("Password again: "), String(cString: second) == password else {
            throw UsageError("the passwords differ")
        }
        return password
    }
}
