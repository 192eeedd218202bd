import Testing
import TandemCore
import TandemStore

/// Failure through `any Store` (decisions P5): a body that throws leaves nothing, a savepoint
/// takes back only its own writes, and a store-level refusal arrives as `StoreError`.
@Suite struct FailureConformanceTests {
    @Test(arguments: StoreBackend.all(for: .failure))
    func aBodyThatThrowsLeavesNothing(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            #expect(throws: Abandon.self) {
                try store.write { tx in
                    try tx.save(fixture.record("lost", fields: ["ref": .reference(Reference(recordName: "target"))]), in: fixture.zone)
                    _ = try tx.ensureZone(fixture.scope, name: "lost-zone", at: 2_000)
                    _ = try tx.createContainer("iCloud.lost", at: 2_000)
                    _ = try tx.addUser(email: "lost@example.com", givenName: nil, familyName: nil, phoneNumber: nil, at: 2_000)
                    try tx.zoneActivity(fixture.zone, container: Fixture.container, environment: .development, viewersChanged: false, at: 2_000)
                    throw Abandon()
                }
            }
            try store.read { reader throws -> Void in
                #expect(try reader.record(zone: fixture.zone, name: "lost") == nil)
                #expect(try reader.referrers(zone: fixture.zone, recordName: "target").isEmpty)
                #expect(try reader.zone(fixture.scope, name: "notes")?.changeSequence == 0)
                #expect(try reader.zone(fixture.scope, name: "lost-zone") == nil)
                #expect(try !reader.containerExists("iCloud.lost"))
                #expect(try reader.user(recordNameOrEmail: "lost@example.com") == nil)
                #expect(try reader.zoneChangePage(zone: fixture.zone, after: 0, limit: 10, memberships: nil, decodeFields: true).isEmpty)
                #expect(try reader.query(Query(recordType: "Note"), zones: [fixture.zone], limit: 10, after: nil, memberships: nil).isEmpty)
            }
            // The store goes on: the next write succeeds, at the sequence the lost one had.
            let sequence = try store.write { tx in try tx.save(fixture.record("kept"), in: fixture.zone) }
            #expect(sequence == 1)
        }
    }

    @Test(arguments: StoreBackend.all(for: .failure))
    func aSavepointTakesBackOnlyItsOwnWrites(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let logged = try store.write { tx -> [String] in
                try tx.save(fixture.record("outer"), in: fixture.zone)
                #expect(throws: Abandon.self) {
                    try tx.savepoint {
                        try tx.save(fixture.record("inner"), in: fixture.zone)
                        throw Abandon()
                    }
                }
                let kept = try tx.atomically { try tx.save(fixture.record("second"), in: fixture.zone) }
                #expect(kept == 2, "the rolled-back savepoint's sequence is taken back too")
                return tx.loggedChanges().map(\.recordName)
            }
            #expect(logged == ["outer", "second"])
            try store.read { reader throws -> Void in
                #expect(try reader.record(zone: fixture.zone, name: "outer") != nil)
                #expect(try reader.record(zone: fixture.zone, name: "inner") == nil)
                #expect(try reader.record(zone: fixture.zone, name: "second") != nil)
                #expect(try reader.zone(fixture.scope, name: "notes")?.changeSequence == 2)
            }
        }
    }

    @Test(arguments: StoreBackend.all(for: .failure))
    func anUnexpectedUniqueViolationIsAConflictAndLeavesNothing(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let hash = [UInt8](repeating: 3, count: 32)
            let grant = TokenGrant(kind: .user, user: fixture.owner, container: nil)
            try store.write { tx in try tx.addToken(hash: hash, grant: grant, at: 2_000) }
            let error = try #require(throws: StoreError.self) {
                try store.write { tx in
                    try tx.save(fixture.record("lost"), in: fixture.zone)
                    try tx.addToken(hash: hash, grant: grant, at: 3_000)
                }
            }
            #expect(error.kind == .conflict)
            #expect(try store.read { try $0.record(zone: fixture.zone, name: "lost") } == nil)
            #expect(try store.read { try $0.zone(fixture.scope, name: "notes") }?.changeSequence == 0)
        }
    }

    @Test(arguments: StoreBackend.all(for: .failure))
    func afterCommitSeesCommittedWritesOnlyAndBeforeWriteReturns(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let hooked = HookLog()
            let sequence = try store.write({ tx in try tx.save(fixture.record("a"), in: fixture.zone) },
                                           afterCommit: { hooked.append($0) })
            #expect(hooked.values == [sequence])
            #expect(throws: Abandon.self) {
                try store.write({ tx -> Int64 in
                    try tx.save(fixture.record("b"), in: fixture.zone)
                    throw Abandon()
                }, afterCommit: { hooked.append($0) })
            }
            #expect(hooked.values == [sequence], "a failed write is not hooked")
        }
    }
}
