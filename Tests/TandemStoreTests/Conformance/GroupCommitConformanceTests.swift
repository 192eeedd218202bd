import Dispatch
import Foundation
import Synchronization
import Testing
import TandemCore
import TandemStore

/// Group commit through `any Store` (decisions P3, P53): writes that queue while another is in
/// its transaction are committed together, each isolated from its neighbours. No retries here:
/// writers of one process are never refused (P48).
@Suite struct GroupCommitConformanceTests {
    /// Runs `writers` calls of `body` on threads of their own while one write is held open, so
    /// that they queue behind it and go to the database as one batch. The held write saves the
    /// record `held` at sequence 1.
    static func queuedBehindAHeldWrite(_ store: any Store, _ fixture: Fixture, writers: Int,
                                       afterCommit: @escaping @Sendable (Int64) -> Void = { _ in },
                                       _ body: @escaping @Sendable (Int) -> Void) {
        let started = DispatchSemaphore(value: 0)
        let held = onThread {
            do {
                _ = try store.write({ tx in
                    started.signal()
                    // Long enough for the other writers to queue on a loaded machine; if they come
                    // later they form batches of their own and the checks still hold.
                    Thread.sleep(forTimeInterval: 0.5)
                    return try tx.save(fixture.record("held"), in: fixture.zone)
                }, afterCommit: afterCommit)
            } catch {
                Issue.record("the held write failed: \(error)")
            }
        }
        started.wait()
        onThreads(writers, body)
        held.wait()
    }

    /// Each of `writers` queued writes (`queuedBehindAHeldWrite`) saves the record `prefix` +
    /// its number, then runs `body`: "committed", or what became of its error (a `StoreError`'s
    /// kind, `Abandon` as "abandoned", any other as described), by writer.
    static func outcomesOfQueuedSaves(_ store: any Store, _ fixture: Fixture, writers: Int, prefix: String,
                                      _ body: @escaping @Sendable (Int, any StoreWriting) throws -> Void) -> [Int: String] {
        let outcomes = Mutex<[Int: String]>([:])
        queuedBehindAHeldWrite(store, fixture, writers: writers) { writer in
            let outcome: String
            do {
                try store.write { tx in
                    try tx.save(fixture.record("\(prefix)\(writer)"), in: fixture.zone)
                    try body(writer, tx)
                }
                outcome = "committed"
            } catch is Abandon {
                outcome = "abandoned"
            } catch let error as StoreError {
                outcome = "\(error.kind)"
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0[writer] = outcome }
        }
        return outcomes.withLock { $0 }
    }

    /// Checks that the zone holds `kept` and not `lost`, at change sequence `sequence`.
    static func expectZone(_ store: any Store, _ fixture: Fixture, holds kept: [String], not lost: [String], sequence: Int64) throws {
        try store.read { reader throws -> Void in
            for name in kept { #expect(try reader.record(zone: fixture.zone, name: name) != nil, "\(name)") }
            for name in lost { #expect(try reader.record(zone: fixture.zone, name: name) == nil, "\(name)") }
            #expect(try reader.zone(fixture.scope, name: "notes")?.changeSequence == sequence)
        }
    }

    @Test(arguments: StoreBackend.all(for: .concurrency))
    func aBodyThatFailsInABatchLeavesNothingWhileItsNeighboursCommit(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let hash = [UInt8](repeating: 7, count: 32)
            let grant = TokenGrant(kind: .user, user: fixture.owner, container: nil)
            try store.write { tx in try tx.addToken(hash: hash, grant: grant, at: 1_500) }
            let outcomes = Self.outcomesOfQueuedSaves(store, fixture, writers: 6, prefix: "n") { writer, tx in
                switch writer {
                case 1: throw Abandon()                                           // the body gives up
                case 3: try tx.addToken(hash: hash, grant: grant, at: 3_000)      // the database refuses a statement
                default: break
                }
            }
            #expect(outcomes == [0: "committed", 1: "abandoned", 2: "committed", 3: "conflict", 4: "committed", 5: "committed"])
            try Self.expectZone(store, fixture, holds: ["held", "n0", "n2", "n4", "n5"], not: ["n1", "n3"], sequence: 5)
            try store.read { reader throws -> Void in
                let feed = try reader.zoneChangePage(zone: fixture.zone, after: 0, limit: 100, memberships: nil, decodeFields: false)
                #expect(feed.map(\.change.sequence) == Array(1...5))
                #expect(Set(feed.map(\.change.recordName)) == ["held", "n0", "n2", "n4", "n5"])
            }
        }
    }

    @Test(arguments: StoreBackend.all(for: .concurrency))
    func hooksOfABatchRunInCommitOrderEachAfterItsCommitAndBeforeItsWriteReturns(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let hooked = HookLog()
            let problems = Mutex<[String]>([])
            let hook: @Sendable (String) -> @Sendable (Int64) -> Void = { name in
                { sequence in
                    // A hook runs once its write committed: a reader sees the write.
                    let stored = try? store.read { try $0.record(zone: fixture.zone, name: name) }
                    if stored == nil { problems.withLock { $0.append("\(name)'s hook ran before its write was visible") } }
                    hooked.append(sequence)
                }
            }
            Self.queuedBehindAHeldWrite(store, fixture, writers: 8, afterCommit: hook("held")) { writer in
                do {
                    let sequence = try store.write({ tx in try tx.save(fixture.record("h\(writer)"), in: fixture.zone) },
                                                   afterCommit: hook("h\(writer)"))
                    if !hooked.values.contains(sequence) {
                        problems.withLock { $0.append("h\(writer)'s write returned before its hook ran") }
                    }
                } catch {
                    problems.withLock { $0.append("h\(writer): \(error)") }
                }
            }
            #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 })")
            #expect(hooked.values == Array(1...9))
        }
    }

    @Test(arguments: StoreBackend.all(for: .concurrency))
    func manyThreadsWritingIntoOneZoneAllSucceedWithoutGapsOrDuplicates(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let (writers, writes) = (16, 8)
            let sequences = HookLog()
            let failures = Mutex<[String]>([])
            onThreads(writers) { writer in
                for index in 0..<writes {
                    do {
                        sequences.append(try store.write { tx in try tx.save(fixture.record("m\(writer)-\(index)"), in: fixture.zone) })
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            let total = writers * writes
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.first ?? "")")
            #expect(sequences.values.sorted() == Array(1...Int64(total)))
            try store.read { reader throws -> Void in
                #expect(try reader.zone(fixture.scope, name: "notes")?.changeSequence == Int64(total))
                let feed = try reader.zoneChangePage(zone: fixture.zone, after: 0, limit: 1_000, memberships: nil, decodeFields: false)
                #expect(feed.map(\.change.sequence) == Array(1...Int64(total)))
                #expect(Set(feed.map(\.change.recordName)).count == total)
            }
        }
    }
}
