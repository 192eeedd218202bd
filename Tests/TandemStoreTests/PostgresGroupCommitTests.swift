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
            let outcomes = GroupCommitConformanceTests.outcomesOfQueuedSaves(store, fixture, writers: 4, prefix: "s") { writer, tx in
                if writer == 2 { _ = try? tx.addToken(hash: hash, grant: grant, at: 3_000) }
            }
            #expect(outcomes == [0: "committed", 1: "committed", 2: "internal", 3: "committed"])
            try GroupCommitConformanceTests.expectZone(store, fixture, holds: ["held", "s0", "s1", "s3"], not: ["s2"], sequence: 4)
        }
    }

    /// A job's deferred statements go out with its savepoint's RELEASE and the next job's
    /// SAVEPOINT, or (the batch's last) before the COMMIT (P75): one that fails there fails its
    /// job alone, wherever the job is in its batch, and rolls back only what that job wrote.
    @Test func aDeferredStatementThatFailsInABatchFailsOnlyItsJob() throws {
        try StoreBackend.postgres.withStore { store in
            let fixture = try Fixture.make(store)
            let outcomes = GroupCommitConformanceTests.outcomesOfQueuedSaves(store, fixture, writers: 6, prefix: "d") { writer, tx in
                if writer % 2 == 1 { try (tx as! PostgresStoreTransaction).db.runDeferred("SELECT 1 / 0") }
            }
            #expect(outcomes.mapValues { $0 == "committed" } == [0: true, 1: false, 2: true, 3: false, 4: true, 5: false])
            try GroupCommitConformanceTests.expectZone(store, fixture, holds: ["held", "d0", "d2", "d4"], not: ["d1", "d3", "d5"], sequence: 4)
        }
    }
}
