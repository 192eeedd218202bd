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
        .library(name: "TandemCore", targets: ["TandemCore"]),
        .library(name: "Tandem", targets: ["Tandem"]),
    ],
    targets: [
        // C shims: a module map and shim.h, nothing else.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CWebSockets", pkgConfig: "libwebsockets", providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // JSON parsing: Jansson keeps Int64 exact and reports line and column of malformed input.
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),

        .target(name: "TandemCore", dependencies: ["CJansson"], swiftSettings: upcoming),
        .target(name: "TandemLinks", dependencies: ["TandemCore"], swiftSettings: upcoming),
        .target(name: "TandemSchema", dependencies: ["TandemCore"], swiftSettings: upcoming),
        .target(name: "TandemStore", dependencies: ["TandemCore", "CSQLite", "CCrypto"], swiftSettings: upcoming),
        .target(name: "TandemHTTP", dependencies: ["CWebSockets"], swiftSettings: upcoming),
        // The client SDK: TandemCore, TandemLinks and TandemHTTP only (DESIGN.md §2).
        .target(name: "Tandem", dependencies: ["TandemCore", "TandemHTTP"], swiftSettings: upcoming),
        .target(name: "TandemServer", dependencies: ["TandemCore", "TandemSchema", "TandemStore", "TandemHTTP", "TandemLinks", "CCrypto"], swiftSettings: upcoming),
        .executableTarget(name: "tandem", dependencies: ["TandemServer", "TandemStore", "TandemCore", "TandemLinks", "TandemSchema"],
                          swiftSettings: upcoming),
        .executableTarget(name: "tandem-bench", dependencies: ["TandemServer", "TandemStore", "TandemHTTP", "TandemCore", "TandemLinks", "TandemSchema", "CSQLite"],
                          swiftSettings: upcoming),

        .executableTarget(name: "DrawTogether", dependencies: ["Tandem"], path: "Examples/DrawTogether", swiftSettings: upcoming),
        .testTarget(name: "TandemCoreTests", dependencies: ["TandemCore"], swiftSettings: upcoming),
        .testTarget(name: "TandemLinksTests", dependencies: ["TandemLinks", "TandemCore"],
                    resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "TandemSchemaTests", dependencies: ["TandemSchema", "TandemCore"],
                    resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "TandemStoreTests", dependencies: ["TandemStore", "TandemCore"], swiftSettings: upcoming),
        .testTarget(name: "TandemHTTPTests", dependencies: ["TandemHTTP"], swiftSettings: upcoming),
        // Spawns the built `tandem` binary; must not depend on TandemServer (the SDK's users cannot).
        .testTarget(name: "TandemTests", dependencies: ["Tandem", "TandemTestSupport"], swiftSettings: upcoming),
        // Runs the built `tandem` binary for end-to-end tests (no Tandem module dependencies).
        .target(name: "TandemTestSupport", path: "Tests/TandemTestSupport", swiftSettings: upcoming),
        .testTarget(name: "TandemServerTests", dependencies: ["TandemServer", "TandemStore", "TandemCore", "TandemHTTP", "TandemTestSupport"],
                    resources: [], swiftSettings: upcoming),
    ]
)
