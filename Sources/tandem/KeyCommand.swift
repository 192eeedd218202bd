import Foundation
import TandemServer
import TandemStore

/// `tandem key add|list|revoke`: server-to-server keys (decisions J7).
enum KeyCommand {
    static let usage = """
          tandem key add --container ID --user EMAIL_OR_USER_RECORD_NAME --public-key pub.pem [--data DIR]
                         (pub.pem from 'openssl ec -in key.pem -pubout'; prints the key ID for X-Apple-CloudKit-Request-KeyID)
          tandem key list --container ID [--data DIR]
          tandem key revoke KEYID [--data DIR]
        """

    /// Runs `key add|list|revoke`; nil when the words are not one of them.
    static func run(_ options: Options, store: StoreLocation) throws -> Int32? {
        let words = options.words
        switch (words.first, words.dropFirst().first, words.count) {
        case ("key", "add", 2):
            guard let container = options.value("container"), let user = options.value("user"), let path = options.value("public-key") else {
                throw UsageError("key add needs --container ID --user EMAIL --public-key pub.pem")
            }
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw UsageError("cannot read \(path)") }
            print(try CommandLine.withStore(store) { try ServerKeyAdmin.add(container: container, user: user, pem: pem, store: $0) })
        case ("key", "list", 2):
            guard let container = options.value("container") else { throw UsageError("key list needs --container ID") }
            for key in try CommandLine.withStore(store, { try ServerKeyAdmin.list(container: container, store: $0) }) {
                let state = key.revokedAt.map { "revoked=\(AccountCommand.stamp($0))" } ?? "active"
                print([key.keyID, key.userRecordName, "created=\(AccountCommand.stamp(key.createdAt))", state].joined(separator: "\t"))
            }
        case ("key", "revoke", 3):
            try CommandLine.withStore(store) { try ServerKeyAdmin.revoke(words[2], store: $0) }
            print("revoked \(words[2])")
        default:
            return nil
        }
        return 0
    }
}
