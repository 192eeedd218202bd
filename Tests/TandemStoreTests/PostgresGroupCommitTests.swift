import Synchronization
import Testing
import TandemCore
import TandemStore
@testable import TandemPostgres
@testable import TandemStorePostgres

/// What only PostgreSQL's group commit has to handle (decisions P53): a failed statement leaves
/// a PostgreSQL transaction unusable until it is rolled back, so a body that swallows such an
/// error (SQLite would carry on) must be rolled back alone, not take its batch down at COMMIT.
@Suite struct PostgresGroupCommitTests {
    @Test func aBodyThatSwallowsAFailedStatementIsRolledBackAloneInItsBatch() throws {
        try StoreBackend.postgres.withStore { store in
            let fixture = try Fixture.make(store)
            let hash = [UInt8](repeating: 9, count: 32)
            let grant = TokenGrant(kind: .user, user: fixture.owner, container: nil)
            try store.write { tx in try tx.addToken(hash: hash, grant: grant, at: 1_500) }
            let outcomes = Mutex<[Int: String]>([:])
            GroupCommitConformanceTests.queuedBehindAHeldWrite(store, fixture, writers: 4) { writer in
                let outcome: String
                do {
                    try store.write { tx in
                        try tx.save(fixture.record("s\(writer)"), in: fixture.zone)
                        if writer == 2 { _ = try? tx.addToken(hash: hash, grant: grant, at: 3_000) }
                    }
                    outcome = "committed"
                } catch let error as StoreError {
                    outcome = "\(error.kind)"
                } catch {
                    outcome = "\(error)"
                }
                outcomes.withLock { $0[writer] = outcome }
            }
            #expect(outcomes.withLock { $0 } == [0: "committed", 1: "committed", 2: "internal", 3: "committed"])
            try store.read { reader throws -> Void in
                for name in ["held", "s0", "s1", "s3"] { #expect(try reader.record(zone: fixture.zone, name: name) != nil, "\(name)") }
                #expect(try reader.record(zone: fixture.zone, name: "s2") == nil)
                #expect(try reader.zone(fixture.scope, name: "notes")?.changeSequence == 4)
            }
        }
    }

    /// A job's deferred statements go out with its savepoint's RELEASE and the next job's
    /// SAVEPOINT, or (the batch's last) before the COMMIT (P75): one that fails there fails its
    /// job alone, wherever the job is in its batch, and rolls back only what that job wrote.
    @Test func aDeferredStatementThatFailsInABatchFailsOnlyItsJob() throws {
        try StoreBackend.postgres.withStore { store in
            let fixture = try Fixture.make(store)
            let outcomes = Mutex<[Int: String]>([:])
            GroupCommitConformanceTests.queuedBehindAHeldWrite(store, fixture, writers: 6) { writer in
                let outcome: String
                do {
                    try store.write { tx in
                        try tx.save(fixture.record("d\(writer)"), in: fixture.zone)
                        if writer % 2 == 1 { try (tx as! PostgresStoreTransaction).db.runDeferred("SELECT 1 / 0") }
                    }
                    outcome = "committed"
                } catch {
                    outcome = "failed"
                }
                outcomes.withLock { $0[writer] = outcome }
            }
            #expect(outcomes.withLock { $0 } == [0: "committed", 1: "failed", 2: "committed", 3: "failed", 4: "committed", 5: "failed"])
            try store.read { reader throws -> Void in
                for name in ["held", "d0", "d2", "d4"] { #expect(try reader.record(zone: fixture.zone, name: name) != nil, "\(name)") }
                for name in ["d1", "d3", "d5"] { #expect(try reader.record(zone: fixture.zone, name: name) == nil, "\(name)") }
                #expect(try reader.zone(fixture.scope, name: "notes")?.changeSequence == 4)
            }
        }
    }
}
