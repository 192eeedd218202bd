import Testing
import TandemCore
import TandemStore

/// Sessions' state through `any Store` (decisions P5): a user token's uses, rotation (A13),
/// revocation, and the session list.
@Suite struct SessionConformanceTests {
    static func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    @Test(arguments: StoreBackend.all(for: .sessions))
    func touchRotateAndRevokeATokenChain(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner
            let grant = TokenGrant(kind: .user, user: owner, container: Fixture.container,
                                   session: TokenSession(device: "laptop", idleMilliseconds: 3_600_000))
            try store.write { tx in try tx.addToken(hash: Self.hash(1), grant: grant, at: 1_000) }
            try store.write { tx in try tx.touchToken(hash: Self.hash(1), at: 5_000) }
            let first = try #require(try store.read { try $0.grant(forTokenHash: Self.hash(1)) })
            #expect(first.session.lastUsedAt == 5_000)
            #expect(first.session.createdAt == 1_000)
            #expect(first.session.device == "laptop")
            #expect(first.container == Fixture.container)

            #expect(try store.write { try $0.rotateToken(hash: Self.hash(1), to: Self.hash(2), grant: grant, at: 6_000) })
            #expect(try !store.write { try $0.rotateToken(hash: Self.hash(1), to: Self.hash(3), grant: grant, at: 6_500) },
                    "a token is replaced once")
            #expect(try store.read { try $0.grant(forTokenHash: Self.hash(1)) }?.session.rotatedAt == 6_000)
            #expect(try store.read { try $0.grant(forTokenHash: Self.hash(3)) } == nil)
            #expect(try store.read { try $0.signedInAt(tokenHash: Self.hash(2)) } == 1_000, "the session began with the first token")
            let sessions = try store.read { try $0.sessions(user: owner.recordName) }
            #expect(!sessions.isEmpty)

            #expect(try store.write { try $0.revokeToken(hash: Self.hash(1), at: 7_000) })
            #expect(try store.read { try $0.grant(forTokenHash: Self.hash(2)) }?.session.revokedAt != nil, "its successor goes with it")
            #expect(try !store.write { try $0.revokeToken(hash: Self.hash(1), at: 7_500) })
            #expect(try store.read { try $0.sessions(user: owner.recordName) }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .sessions))
    func revokingEverySessionOfAUser(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner
            let grant = TokenGrant(kind: .user, user: owner, container: nil)
            try store.write { tx in
                try tx.addToken(hash: Self.hash(1), grant: grant, at: 1_000)
                try tx.addToken(hash: Self.hash(2), grant: grant, at: 2_000)
            }
            #expect(try store.read { try $0.sessions(user: owner.recordName) }.count == 2)
            #expect(try store.write { try $0.revokeSessions(user: owner.recordName, id: nil, at: 3_000) } == 2)
            #expect(try store.read { try $0.sessions(user: owner.recordName) }.isEmpty)
            #expect(try store.read { try $0.grant(forTokenHash: Self.hash(2)) }?.session.refusal(at: 3_001) != nil)
        }
    }
}
