import Testing
import TandemCore
import TandemStore

/// The web console's reads and writes through `any Store` (decisions P5, P33): server
/// administrators, console sessions, containers, API tokens, the account search (SQLite's LIKE
/// rules on both stores, P34), shares, Shared with You's counts and server-to-server keys.
@Suite struct ConsoleConformanceTests {
    static func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    static func addUser(_ store: any Store, _ email: String, given: String? = nil, family: String? = nil, at time: Int64) throws -> UserAccount {
        try store.write { tx in try tx.addUser(email: email, givenName: given, familyName: family, phoneNumber: nil, at: time) }
    }

    static func profile(_ user: UserAccount, at time: Int64) -> AccountProfile {
        AccountProfile(recordName: user.recordName, email: user.email, emailVerified: false, displayName: nil, createdAt: time)
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func serverAdministratorsAreSetAndListedOldestFirst(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner
            let ida = try Self.addUser(store, "ida@example.com", at: 2_000)
            #expect(try !store.read { try $0.hasServerAdmin() })
            try store.write { tx in
                try tx.setServerAdmin(user: ida.recordName, true)
                try tx.setServerAdmin(user: owner.recordName, true)
                try tx.setServerAdmin(user: "_absent", true)
            }
            try store.read { reader throws -> Void in
                #expect(try reader.hasServerAdmin())
                #expect(try reader.isServerAdmin(user: ida.recordName))
                #expect(try !reader.isServerAdmin(user: "_absent"))
                #expect(try reader.serverAdmins() == [Self.profile(owner, at: 1_000), Self.profile(ida, at: 2_000)], "oldest account first")
            }
            try store.write { tx in try tx.setServerAdmin(user: owner.recordName, false) }
            #expect(try !store.read { try $0.isServerAdmin(user: owner.recordName) })
            #expect(try store.read { try $0.serverAdmins() }.map(\.recordName) == [ida.recordName])
            try store.write { tx in try tx.setServerAdmin(user: ida.recordName, false) }
            #expect(try !store.read { try $0.hasServerAdmin() })
        }
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func consoleSessionsAreTouchedForwardAndRevokedOnce(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            try store.write { tx in
                try tx.addConsoleSession(hash: Self.hash(0xAB), user: owner, at: 1_000, expiresAt: 100_000, idleMilliseconds: 3_600)
            }
            let created = ConsoleSession(id: "abababababababab", user: owner, createdAt: 1_000, lastUsedAt: 1_000, expiresAt: 100_000,
                                         idleMilliseconds: 3_600, revokedAt: nil)
            #expect(try store.read { try $0.consoleSession(hash: Self.hash(0xAB)) } == created)
            try store.write { tx in try tx.touchConsoleSession(hash: Self.hash(0xAB), at: 5_000) }
            try store.write { tx in try tx.touchConsoleSession(hash: Self.hash(0xAB), at: 4_000) }
            var touched = created
            touched.lastUsedAt = 5_000
            #expect(try store.read { try $0.consoleSession(hash: Self.hash(0xAB)) } == touched, "a late, older touch does not move it back")
            #expect(try store.write { try $0.revokeConsoleSession(hash: Self.hash(0xAB), at: 6_000) })
            #expect(try !store.write { try $0.revokeConsoleSession(hash: Self.hash(0xAB), at: 7_000) }, "revoked once")
            #expect(try !store.write { try $0.revokeConsoleSession(hash: Self.hash(0x01), at: 7_000) }, "unknown")
            touched.revokedAt = 6_000
            #expect(try store.read { try $0.consoleSession(hash: Self.hash(0xAB)) } == touched)
            #expect(try store.read { try $0.consoleSession(hash: Self.hash(0x01)) } == nil)
        }
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func containersCountTheirZonesPerEnvironment(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let owner = fixture.owner.recordName
            try store.write { tx in
                _ = try tx.createContainer("iCloud.empty", at: 900)
                _ = try tx.ensureZone(Fixture.scope(owner: owner), name: "more", at: 1_000)
                _ = try tx.ensureZone(Fixture.scope(owner: owner, database: .shared), name: "elsewhere", at: 1_000)
                _ = try tx.ensureZone(DatabaseScope(container: Fixture.container, environment: .production, database: .private, owner: owner),
                                      name: "notes", at: 1_000)
            }
            #expect(try store.read { try $0.containers() } == [
                ContainerSummary(id: Fixture.container, createdAt: 1_000, zones: ["development": 3, "production": 1]),
                ContainerSummary(id: "iCloud.empty", createdAt: 900, zones: [:]),
            ])
        }
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func apiTokensAreListedOldestFirstAndRevokedByID(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner
            try store.write { tx in
                _ = try tx.createContainer("iCloud.other", at: 1_000)
                try tx.addToken(hash: Self.hash(0x02), grant: TokenGrant(kind: .api, user: nil, container: Fixture.container,
                                                                        origins: ["https://a.example", "https://b.example"],
                                                                        callback: "https://a.example/done"), at: 3_000)
                try tx.addToken(hash: Self.hash(0x0C), grant: TokenGrant(kind: .api, user: nil, container: Fixture.container), at: 2_000)
                try tx.addToken(hash: Self.hash(0x03), grant: TokenGrant(kind: .api, user: nil, container: "iCloud.other"), at: 1_000)
                // A user's token in the container is not an API token.
                try tx.addToken(hash: Self.hash(0x04), grant: TokenGrant(kind: .user, user: owner, container: Fixture.container), at: 1_000)
            }
            let plain = StoredAPIToken(id: "0c0c0c0c0c0c0c0c", container: Fixture.container, origins: [], callback: nil, createdAt: 2_000,
                                       revokedAt: nil)
            let web = StoredAPIToken(id: "0202020202020202", container: Fixture.container, origins: ["https://a.example", "https://b.example"],
                                     callback: "https://a.example/done", createdAt: 3_000, revokedAt: nil)
            #expect(try store.read { try $0.apiTokens(container: Fixture.container) } == [plain, web])
            #expect(try !store.write { try $0.revokeAPIToken(container: "iCloud.other", id: web.id, at: 4_000) }, "another container's")
            #expect(try !store.write { try $0.revokeAPIToken(container: Fixture.container, id: "0404040404040404", at: 4_000) },
                    "a user's token")
            #expect(try store.write { try $0.revokeAPIToken(container: Fixture.container, id: web.id.uppercased(), at: 4_000) },
                    "IDs match in either case")
            #expect(try !store.write { try $0.revokeAPIToken(container: Fixture.container, id: web.id, at: 5_000) }, "revoked once")
            var revoked = web
            revoked.revokedAt = 4_000
            #expect(try store.read { try $0.apiTokens(container: Fixture.container) } == [plain, revoked])
            #expect(try store.read { try $0.apiTokens(container: "iCloud.other") }.map(\.id) == ["0303030303030303"])
        }
    }

    /// One account search: the text, the limit, and the accounts found (by their key in
    /// `searchAccounts`, oldest first).
    struct Search: Sendable, CustomTestStringConvertible {
        var text: String
        var limit = 10
        var expected: [String]
        var testDescription: String { "\"\(text)\" (limit \(limit))" }

        /// Record names are random: `@name` searches for the record name of account `name`.
        static let all = [
            Search(text: "", expected: ["owner", "zoe", "pct", "under", "slash", "mixed"]),
            Search(text: "", limit: 2, expected: ["owner", "zoe"]),
            Search(text: "olive", expected: ["owner"]),
            Search(text: "OWNER@EXAMPLE", expected: ["owner"]),
            Search(text: "example.", expected: ["owner", "zoe", "pct", "under", "slash", "mixed"]),
            Search(text: "example.", limit: 3, expected: ["owner", "zoe", "pct"]),
            Search(text: "mixed.case@example.com", expected: ["mixed"]),
            Search(text: "Zoë", expected: ["zoe"]),
            Search(text: "zoë", expected: ["zoe"]),
            Search(text: "ZOË", expected: []),
            Search(text: "ärger", expected: []),
            Search(text: "Ärger", expected: ["zoe"]),
            Search(text: "%", expected: ["pct"]),
            Search(text: "0%", expected: ["pct"]),
            Search(text: "_", expected: ["under"]),
            Search(text: "a_b", expected: ["under"]),
            Search(text: "a%b", expected: []),
            Search(text: "\\", expected: ["slash"]),
            Search(text: "k\\s", expected: ["slash"]),
            Search(text: "@zoe", expected: ["zoe"]),
            Search(text: "nobody", expected: []),
        ]
    }

    /// Accounts for `Search`, created in this order.
    static let searchAccounts: [(key: String, email: String, given: String?, family: String?)] = [
        ("zoe", "zoe@example.org", "Zoë", "Ärger"),
        ("pct", "pct@example.org", "100%", nil),
        ("under", "under@example.org", nil, "a_b"),
        ("slash", "slash@example.org", "back\\slash", nil),
        ("mixed", "Mixed.Case@Example.COM", nil, nil),
    ]

    @Test(arguments: StoreBackend.all(for: .console), Search.all)
    func accountSearchMatchesNamesAndEmailsLiterallyFoldingASCII(backend: StoreBackend, search: Search) throws {
        try backend.withStore { store in
            var names = ["owner": try Fixture.make(store).owner.recordName]
            for (index, account) in Self.searchAccounts.enumerated() {
                names[account.key] = try Self.addUser(store, account.email, given: account.given, family: account.family,
                                                      at: 2_000 + Int64(index)).recordName
            }
            let text = search.text.hasPrefix("@") ? names[String(search.text.dropFirst())]! : search.text
            let found = try store.read { try $0.searchProfiles(text, limit: search.limit) }
            #expect(found.map(\.recordName) == search.expected.map { names[$0]! })
        }
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func shareSummariesCountParticipantsNewestFirst(backend: StoreBackend) throws {
        try ShareConformanceTests.withShare(backend) { store, people in
            let owner = people.fixture.owner.recordName
            try store.write { tx in
                try tx.putParticipant(ShareConformanceTests.participant("p-owner", user: owner, role: .owner, status: .accepted), share: people.share)
                try tx.putParticipant(ShareConformanceTests.participant("p-friend", user: people.friend.recordName, status: .accepted),
                                      share: people.share)
                try tx.putParticipant(ShareConformanceTests.participant("p-invited", user: nil, email: "ida@example.com", status: .pending),
                                      share: people.share)
                try tx.putParticipant(ShareConformanceTests.participant("p-gone", user: nil, email: "gus@example.com", status: .removed),
                                      share: people.share)
                try tx.addRequester("_" + String(repeating: "e", count: 32), share: people.share, at: 2_500)
                let zone = try tx.ensureZone(Fixture.scope(owner: people.friend.recordName), name: "friends", at: 3_000)
                _ = try tx.putShare(StoredShare(key: 0, zone: zone, recordName: "cloudkit.zoneshare", rootRecordName: nil,
                                                shortGUID: "guid-zone", publicPermission: .readOnly, allowsAccessRequests: false,
                                                createdAt: 3_000))
            }
            let rootShare = ShareSummary(shortGUID: "guid-root", owner: owner, ownerEmail: "owner@example.com", zoneName: "notes",
                                         rootName: "root", publicPermission: "NONE", allowsAccessRequests: true, accepted: 1, invited: 1,
                                         requests: 1, createdAt: 2_000)
            let zoneShare = ShareSummary(shortGUID: "guid-zone", owner: people.friend.recordName, ownerEmail: "friend@example.com",
                                         zoneName: "friends", rootName: nil, publicPermission: "READ_ONLY", allowsAccessRequests: false,
                                         accepted: 0, invited: 0, requests: 0, createdAt: 3_000)
            try store.read { reader throws -> Void in
                #expect(try reader.shareSummaries(container: Fixture.container, environment: "development", limit: 10) == [zoneShare, rootShare])
                #expect(try reader.shareSummaries(container: Fixture.container, environment: "development", limit: 1) == [zoneShare])
                #expect(try reader.shareSummaries(container: Fixture.container, environment: "production", limit: 10).isEmpty)
            }
        }
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func sharedWithYouCountsOneContainerEnvironment(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let (ann, ben) = (ConversationConformanceTests.ann, ConversationConformanceTests.ben)
            #expect(try store.read { try $0.sharedWithYouCounts(container: Fixture.container, environment: .development) }
                == SharedWithYouCounts(conversations: 0, messages: 0, links: 0))
            try store.write { tx in
                for (id, environment) in [("conv-1", Environment.development), ("conv-2", .development), ("conv-p", .production)] {
                    try tx.insertConversation(StoredConversation(id: id, container: Fixture.container, environment: environment, isGroup: false,
                                                                 title: nil, createdBy: ann, createdAt: 1_000, members: [ann, ben]))
                }
                for (id, kind, conversation) in [("m1", StoredConversationEvent.Kind.message, "conv-1"), ("m2", .message, "conv-2"),
                                                 ("m3", .message, "conv-1"), ("n1", .notice, "conv-1"), ("mp", .message, "conv-p")] {
                    _ = try tx.appendEvent(StoredConversationEvent(conversationID: conversation, eventID: id, kind: kind, actor: ann,
                                                                   collaborationID: kind == .notice ? "doc-1" : nil, body: Array("{}".utf8),
                                                                   createdAt: 1_100))
                }
                try tx.putConversationLink(conversation: "conv-1", url: "https://example.com/a", seq: 1, sender: ann)
                try tx.putConversationLink(conversation: "conv-2", url: "https://example.com/a", seq: 2, sender: ann)
                try tx.putConversationLink(conversation: "conv-p", url: "https://example.com/b", seq: 5, sender: ann)
            }
            #expect(try store.read { try $0.sharedWithYouCounts(container: Fixture.container, environment: .development) }
                == SharedWithYouCounts(conversations: 2, messages: 3, links: 2))
            #expect(try store.read { try $0.sharedWithYouCounts(container: Fixture.container, environment: .production) }
                == SharedWithYouCounts(conversations: 1, messages: 1, links: 1))
        }
    }

    @Test(arguments: StoreBackend.all(for: .console))
    func serverKeysAreListedOldestFirstAndRevoked(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let ida = try Self.addUser(store, "ida@example.com", at: 1_500).recordName
            @Sendable func key(_ digit: Character, container: String = Fixture.container, user: String, at time: Int64) -> StoredServerKey {
                StoredServerKey(keyID: String(repeating: digit, count: 64), container: container,
                                publicKey: [0x04] + [UInt8](repeating: UInt8(time % 251), count: 64), userRecordName: user, createdAt: time)
            }
            let late = key("a", user: owner, at: 3_000)
            let early = key("b", user: ida, at: 2_000)
            let other = key("c", container: "iCloud.other", user: owner, at: 1_000)
            try store.write { tx in
                _ = try tx.createContainer("iCloud.other", at: 1_000)
                for each in [late, early, other] { try tx.addServerKey(each) }
            }
            #expect(try store.read { try $0.serverKeys(container: Fixture.container) } == [early, late])
            #expect(try store.read { try $0.serverKey(id: other.keyID) } == other)
            #expect(try store.read { try $0.serverKey(id: String(repeating: "f", count: 64)) } == nil)
            #expect(try store.write { try $0.revokeServerKey(id: late.keyID, at: 4_000) })
            #expect(try !store.write { try $0.revokeServerKey(id: late.keyID, at: 4_500) }, "revoked once")
            #expect(try !store.write { try $0.revokeServerKey(id: String(repeating: "f", count: 64), at: 4_500) }, "unknown")
            // Every working key of the user, in every container; an already revoked one keeps its time.
            #expect(try store.write { try $0.revokeServerKeys(user: owner, at: 5_000) } == 1)
            #expect(try store.write { try $0.revokeServerKeys(user: owner, at: 6_000) } == 0)
            #expect(try store.read { try $0.serverKey(id: late.keyID) }?.revokedAt == 4_000)
            #expect(try store.read { try $0.serverKey(id: other.keyID) }?.revokedAt == 5_000)
            #expect(try store.read { try $0.serverKey(id: early.keyID) }?.revokedAt == nil)
        }
    }

    /// The console's reads of accounts made by sign-up and ended by deletion (A15): display names
    /// are searched, consents listed, and a deleted account is no one. Its area, `.consoleAccounts`,
    /// needs `addVerifiedUser`, `addConsent` and `eraseAccount` besides the console's own methods.
    @Test(arguments: StoreBackend.all(for: .consoleAccounts))
    func consoleReadsOfSignedUpAndDeletedAccounts(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner
            let vera = try store.write { tx in
                _ = try tx.createContainer("iCloud.zed", at: 1_000)
                let vera = try tx.addVerifiedUser(email: "vera@example.com", displayName: "Vera Lynn", at: 2_000)
                try tx.addConsent(user: vera.recordName, container: "iCloud.zed", at: 2_100)
                try tx.addConsent(user: vera.recordName, container: Fixture.container, at: 2_200)
                try tx.setServerAdmin(user: vera.recordName, true)
                return vera
            }
            let profile = AccountProfile(recordName: vera.recordName, email: "vera@example.com", emailVerified: true, displayName: "Vera Lynn",
                                         createdAt: 2_000)
            try store.read { reader throws -> Void in
                #expect(try reader.searchProfiles("LYNN", limit: 10) == [profile], "display names fold ASCII letters too")
                #expect(try reader.serverAdmins() == [profile])
                #expect(try reader.consents(user: vera.recordName) == [Fixture.container, "iCloud.zed"], "by container ID")
                #expect(try reader.consents(user: owner.recordName).isEmpty)
            }
            _ = try store.write { tx in try tx.eraseAccount(user: vera.recordName, at: 3_000) }
            try store.read { reader throws -> Void in
                #expect(try reader.searchProfiles("", limit: 10).map(\.recordName) == [owner.recordName])
                #expect(try reader.searchProfiles(vera.recordName, limit: 10).isEmpty)
                #expect(try !reader.hasServerAdmin())
                #expect(try !reader.isServerAdmin(user: vera.recordName))
                #expect(try reader.serverAdmins().isEmpty)
                #expect(try reader.consents(user: vera.recordName).isEmpty)
            }
        }
    }
}
