import TandemCore
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite
import TandemStorePostgres

/// The container, user and token every benchmark request is made with, set up in a data
/// directory through the Admin API (as `tandem container create`, `user add` and
/// `token create` would) before the server opens it.
struct BenchAccount {
    static let container = "iCloud.com.example.bench"
    static let email = "bench@example.com"

    var userRecordName: String
    var token: String
    /// A web auth token of the bench container, shaped as a sign-in issues it (bound to the
    /// container, idle and absolute limits), so lookups can be measured with it too.
    var webToken: String = ""

    /// Creates the container and user (`email`) when missing, and a fresh token.
    static func prepare(in directory: String, email: String = email) throws -> BenchAccount {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        return try prepare(store: store, email: email)
    }

    /// The same in the PostgreSQL database at `url` (assets in `directory`).
    static func prepare(postgresURL url: String, directory: String) throws -> BenchAccount {
        let store = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 1))
        defer { store.close() }
        return try prepare(store: store)
    }

    static func prepare(store: any Store, email: String = email) throws -> BenchAccount {
        _ = try Admin.createContainer(container, store: store)
        let user = try store.read { try $0.user(recordNameOrEmail: email) }
            ?? Admin.addUser(email: email, name: "Bench Mark", store: store)
        let token = try Admin.createUserToken(for: user.recordName, store: store)
        let web = Tokens.make(kind: .user)
        let now = Clock.milliseconds()
        let session = TokenSession(device: "tandem-bench", expiresAt: now + 86_400_000, idleMilliseconds: 14 * 86_400_000)
        try store.write { try $0.addToken(hash: Tokens.hash(web), grant: TokenGrant(kind: .user, user: user, container: container, session: session), at: now) }
        return BenchAccount(userRecordName: user.recordName, token: token, webToken: web)
    }

    /// The private database of the bench user, for building request paths.
    static let databasePath = "/database/1/\(container)/development/private"

    var headers: [(String, String)] {
        [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")]
    }

    var webTokenHeaders: [(String, String)] {
        [("Authorization", "Bearer \(webToken)"), ("Content-Type", "application/json")]
    }
}
