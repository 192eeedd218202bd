import Testing
import TandemCore
import TandemStore

/// Activity invitations through `any Store` (decisions R19, R21, R41): found by the hash of their
/// token or of their code, revoked only by their creator and once, expired ones forgotten a day
/// after they expired when the next one is made, a taken token, code or ID refused without a write.
@Suite struct ActivityInvitationConformanceTests {
    static func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    static func invitation(_ id: String, creator: String, createdAt: Int64, expiresAt: Int64) -> StoredActivityInvitation {
        StoredActivityInvitation(id: id, container: Fixture.container, environment: .development, conversationID: "c-1", creator: creator,
                                 activity: #"{"identifier":"com.example.sketch","metadata":{},"payload":"{}"}"#, createdAt: createdAt,
                                 expiresAt: expiresAt, revokedAt: nil)
    }

    @Test(arguments: StoreBackend.all(for: .sessions))
    func foundByTokenOrCodeAndRevokedOnceByItsCreator(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let made = Self.invitation("inv-1", creator: owner, createdAt: 1_000, expiresAt: 90_000)
            try store.write { try $0.addActivityInvitation(made, tokenHash: Self.hash(1), codeHash: Self.hash(2)) }
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(1)) } == made)
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(2)) } == made)
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(3)) } == nil)

            #expect(try !store.write { try $0.revokeActivityInvitation(id: "inv-1", creator: "someone else", at: 2_000) })
            #expect(try store.write { try $0.revokeActivityInvitation(id: "inv-1", creator: owner, at: 2_000) })
            #expect(try !store.write { try $0.revokeActivityInvitation(id: "inv-1", creator: owner, at: 3_000) }, "revoked once")
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(2)) }?.revokedAt == 2_000)
        }
    }

    @Test(arguments: StoreBackend.all(for: .sessions))
    func makingOneForgetsThoseExpiredForADay(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            try store.write { tx in
                try tx.addActivityInvitation(Self.invitation("old", creator: owner, createdAt: 1_000, expiresAt: 2_000),
                                             tokenHash: Self.hash(1), codeHash: Self.hash(2))
                try tx.addActivityInvitation(Self.invitation("recent", creator: owner, createdAt: 1_000, expiresAt: 50_000_000),
                                             tokenHash: Self.hash(3), codeHash: Self.hash(4))
            }
            let later = Self.invitation("new", creator: owner, createdAt: 2_000 + 86_400_001, expiresAt: 200_000_000)
            try store.write { try $0.addActivityInvitation(later, tokenHash: Self.hash(5), codeHash: Self.hash(6)) }
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(1)) } == nil, "expired over a day before")
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(3)) }?.id == "recent", "expired less than a day before")
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(6)) }?.id == "new")
        }
    }

    /// Seed behaviour: a second invitation with a taken code hash threw the store's unique-constraint
    /// error (a 500 from `create`). Now it answers false, writes nothing, and the same transaction
    /// stores the next one (R41).
    @Test(arguments: StoreBackend.all(for: .sessions))
    func aTakenTokenCodeOrIDWritesNothingAndTheTransactionGoesOn(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let first = Self.invitation("first", creator: owner, createdAt: 1_000, expiresAt: 90_000)
            #expect(try store.write { try $0.addActivityInvitation(first, tokenHash: Self.hash(1), codeHash: Self.hash(2)) })
            let second = Self.invitation("second", creator: owner, createdAt: 1_000, expiresAt: 90_000)
            let stored = try store.write { tx in
                [try tx.addActivityInvitation(second, tokenHash: Self.hash(3), codeHash: Self.hash(2)),
                 try tx.addActivityInvitation(second, tokenHash: Self.hash(1), codeHash: Self.hash(4)),
                 try tx.addActivityInvitation(first, tokenHash: Self.hash(5), codeHash: Self.hash(6)),
                 try tx.addActivityInvitation(second, tokenHash: Self.hash(7), codeHash: Self.hash(8))]
            }
            #expect(stored == [false, false, false, true], "taken code, taken token, taken ID, then a free one")
            for hash in [3, 4, 5, 6] as [UInt8] {
                #expect(try store.read { try $0.activityInvitation(hash: Self.hash(hash)) } == nil, "nothing written under \(hash)")
            }
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(2)) }?.id == "first")
            #expect(try store.read { try $0.activityInvitation(hash: Self.hash(8)) }?.id == "second")
        }
    }
}
