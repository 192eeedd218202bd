// swift-tools-version: 6.0
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Tandem",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tandem", targets: ["tandem"]),
        .executable(name: "tandem-bench", targets: ["tandem-bench"]),
        .executable(name: "shared-notes", targets: ["SharedNotes"]),
        .library(name: "TandemCore", targets: ["TandemCore"]),
        .library(name: "Tandem", targets: ["Tandem"]),
    ],
    targets: [
        // C shims: a module map and shim.h, nothing else.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CWebSockets", pkgConfig: "libwebsockets", providers: [.apt(["libwebsockets-dev"])]),
        // libev, the epoll loop libwebsockets runs on (its evlib_ev plugin; decisions E33).
        .systemLibrary(name: "CLibEV", providers: [.apt(["libev-dev", "libwebsockets-evlib-ev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // JSON parsing: Jansson keeps Int64 exact and reports line and column of malformed input.
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        // Argon2id password hashing (the reference implementation), for the server only.
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        // SMTP (with TLS) for account emails, for the server only.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // CBOR (RFC 8949) for passkeys' attestation objects and COSE keys, for the server only.
        .systemLibrary(name: "CCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // PostgreSQL's client library, for the PostgreSQL store (issue 19).
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // The NATS C client, for the bus between nodes (issue 20).
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),

        .target(name: "TandemCore", dependencies: ["CJansson"], swiftSettings: upcoming),
        .target(name: "TandemLinks", dependencies: ["TandemCore"], swiftSettings: upcoming),
        .target(name: "TandemSchema", dependencies: ["TandemCore"], swiftSettings: upcoming),
        // SHA-256, HMAC, P-256 signatures and the identity-proof Merkle trees (D24), over libcrypto.
        .target(name: "TandemCrypto", dependencies: ["CCrypto"], swiftSettings: upcoming),
        // The SQLite wrapper (connections, statements, values, the server's reader pool and writer):
        // shared by the server's store and the SDK's LocalStore.
        .target(name: "TandemSQLite", dependencies: ["CSQLite", "TandemCore"], swiftSettings: upcoming),
        // The libpq wrapper (connections, prepared statements, transactions, the pool), for the
        // PostgreSQL store (issue 19; decisions P10–P19).
        .target(name: "TandemPostgres", dependencies: ["CPostgres", "TandemCore"], swiftSettings: upcoming),
        // The PostgreSQL store (issue 19): its schema, migrator and `PostgresStore` over TandemPostgres.
        .target(name: "TandemStorePostgres", dependencies: ["TandemPostgres", "TandemStore", "TandemCore", "TandemCrypto"], swiftSettings: upcoming),
        // The store's protocols and value types, backend-neutral (decisions P1): the server sees only these.
        .target(name: "TandemStore", dependencies: ["TandemCore", "TandemCrypto"], swiftSettings: upcoming),
        // The embedded store over SQLite: SQLiteStore, its migrations and query planner.
        .target(name: "TandemStoreSQLite", dependencies: ["TandemStore", "TandemSQLite", "TandemCore", "TandemCrypto"], swiftSettings: upcoming),
        // `tandem migrate`: copies a whole store between SQLite and PostgreSQL (decisions P40–P43).
        .target(name: "TandemStoreCopy", dependencies: ["TandemStore", "TandemStoreSQLite", "TandemSQLite", "TandemStorePostgres", "TandemPostgres", "TandemCrypto"],
                swiftSettings: upcoming),
        .target(name: "TandemHTTP", dependencies: ["CWebSockets", "CLibEV", "TandemCore"], swiftSettings: upcoming),
        // The libnats wrapper (one connection, publish, one subscription, reconnect events), for
        // the NATS bus between nodes (issue 20; decisions N1–N12).
        .target(name: "TandemNATS", dependencies: ["CNATS", "TandemCore"], swiftSettings: upcoming),
        // The client SDK: TandemCore, TandemHTTP, TandemSQLite (its LocalStore) and TandemCrypto (device keys) only (DESIGN.md §2).
        .target(name: "Tandem", dependencies: ["TandemCore", "TandemHTTP", "TandemSQLite", "TandemCrypto"], swiftSettings: upcoming),
        .target(name: "TandemServer", dependencies: ["TandemCore", "TandemSchema", "TandemStore", "TandemHTTP", "TandemLinks", "TandemCrypto", "CArgon2", "CCurl", "CCBOR", "CQREncode"], swiftSettings: upcoming),
        .executableTarget(name: "tandem", dependencies: ["TandemServer", "TandemNATS", "TandemStore", "TandemStoreSQLite", "TandemStorePostgres", "TandemPostgres", "TandemStoreCopy", "TandemSQLite", "TandemCore", "TandemLinks", "TandemSchema", "TandemCrypto", "TandemHTTP"],
                          swiftSettings: upcoming),
        .executableTarget(name: "tandem-bench", dependencies: ["TandemServer", "TandemStore", "TandemStoreSQLite", "TandemSQLite", "Tandem", "TandemHTTP", "TandemCore", "TandemLinks", "TandemSchema", "TandemCrypto", "CSQLite", "TandemStoreCopy", "TandemStorePostgres", "TandemPostgres", "TandemTestSupport"],
                          swiftSettings: upcoming),

        // The SDK's example: a command-line notes app using only the public `Tandem` API.
        .executableTarget(name: "SharedNotes", dependencies: ["Tandem"], path: "Examples/SharedNotes", swiftSettings: upcoming),

        // Group sessions' example: draw together on a character grid (public `Tandem` API only).
        .executableTarget(name: "DrawTogether", dependencies: ["Tandem"], path: "Examples/DrawTogether", swiftSettings: upcoming),

        .testTarget(name: "TandemCoreTests", dependencies: ["TandemCore"], swiftSettings: upcoming),
        .testTarget(name: "TandemLinksTests", dependencies: ["TandemLinks", "TandemCore"],
                    resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "TandemSchemaTests", dependencies: ["TandemSchema", "TandemCore"],
                    resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "TandemCryptoTests", dependencies: ["TandemCrypto"], swiftSettings: upcoming),
        .testTarget(name: "TandemStoreTests", dependencies: ["TandemStore", "TandemStoreSQLite", "TandemSQLite", "TandemCore", "TandemStorePostgres", "TandemTestSupport"], swiftSettings: upcoming),
        // Against a throwaway PostgreSQL cluster (TandemTestSupport's PostgresCluster).
        .testTarget(name: "TandemPostgresTests", dependencies: ["TandemPostgres", "TandemTestSupport"], swiftSettings: upcoming),
        // The PostgreSQL schema against SQLite's, as the built `tandem` creates it (no TandemStore dependency).
        .testTarget(name: "TandemStorePostgresTests", dependencies: ["TandemStorePostgres", "TandemPostgres", "TandemSQLite", "TandemTestSupport"],
                    swiftSettings: upcoming),
        .testTarget(name: "TandemHTTPTests", dependencies: ["TandemHTTP", "TandemTestSupport"], swiftSettings: upcoming),
        // Spawns the built `tandem` binary; must not depend on TandemServer (the SDK's users cannot).
        .testTarget(name: "TandemTests", dependencies: ["Tandem", "TandemTestSupport"], swiftSettings: upcoming),
        // Runs the built `tandem` binary for end-to-end tests (no Tandem module dependencies).
        .target(name: "TandemTestSupport", path: "Tests/TandemTestSupport", swiftSettings: upcoming),
        .testTarget(name: "TandemServerTests", dependencies: ["TandemServer", "TandemNATS", "TandemStore", "TandemStoreSQLite", "TandemStorePostgres", "TandemPostgres", "TandemSQLite", "TandemCore", "TandemHTTP", "TandemCrypto", "TandemTestSupport"],
                    resources: [], swiftSettings: upcoming),
    ]
)
