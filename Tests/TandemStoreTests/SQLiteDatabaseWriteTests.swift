import Dispatch
import Testing
@testable import TandemStore
@testable import TandemSQLite

@Suite struct SQLiteDatabaseWriteTests {
    @Test func concurrentWritersAllCommitInSharedTransactions() throws {
        try withItemDatabase(synchronous: .full) { database, _ throws in
            let threads = 64, writesPerThread = 200
            let failures = Outcomes<String>()
            onThreads(threads) { thread in
                for index in 0..<writesPerThread {
                    do {
                        try database.write(insertItem(thread * writesPerThread + index))
                    } catch {
                        failures.record(thread * writesPerThread + index, "\(error)")
                    }
                }
            }
            #expect(failures.all.isEmpty)
            #expect(try itemKeys(database) == Array(0..<threads * writesPerThread))
            let counts = database.writer.counts
            #expect(counts.jobs == threads * writesPerThread)
            #expect(counts.transactions < counts.jobs / 4, "writes were grouped: \(counts)")
        }
    }

    @Test func writeReturnsTheBodysResultAndRethrowsItsError() throws {
        try withItemDatabase { database, _ throws in
            let rowID = try database.write { connection in
                try connection.run("INSERT INTO item(key) VALUES (1)")
                return connection.lastInsertRowID
            }
            #expect(rowID == 1)
            let error = #expect(throws: DeliberateFailure.self) {
                try database.write { connection in
                    try connection.run("INSERT INTO item(key) VALUES (2)")
                    throw DeliberateFailure(tag: 2)
                }
            }
            #expect(error == DeliberateFailure(tag: 2))
            let duplicate = #expect(throws: SQLiteError.self) { try database.write(insertItem(1)) }
            #expect(duplicate?.code == .constraintUnique)
            #expect(try itemKeys(database) == [1], "the failed writes left nothing")
        }
    }

    @Test func failingJobInTheMiddleOfABatchIsRolledBackAlone() throws {
        try withItemDatabase { database, _ throws in
            var jobs = (0..<20).map { insertItem($0) }
            jobs[10] = { connection in
                try connection.run("INSERT INTO item(key) VALUES (10)")
                try connection.run("INSERT INTO item(key) VALUES (1000)")
                throw DeliberateFailure(tag: 10)
            }
            let outcomes = try runInOneBatch(database, jobs)
            for (index, outcome) in outcomes {
                switch outcome {
                case .success: #expect(index != 10)
                case .failure(let error):
                    #expect(index == 10)
                    #expect(error as? DeliberateFailure == DeliberateFailure(tag: 10))
                }
            }
            #expect(try itemKeys(database) == Array(0..<10) + Array(11..<20))
        }
    }

    @Test func constraintErrorInABatchFailsOnlyItsJob() throws {
        try withItemDatabase { database, _ throws in
            let outcomes = try runInOneBatch(database, [insertItem(1), insertItem(2), insertItem(1), insertItem(3)])
            #expect(outcomes.filter { (try? $0.value.get()) == nil }.map(\.key) == [2])
            if case .failure(let error as SQLiteError)? = outcomes[2] {
                #expect(error.code == .constraintUnique)
            } else {
                Issue.record("the duplicate key was accepted")
            }
            #expect(try itemKeys(database) == [1, 2, 3])
        }
    }

    /// A deferred foreign key is only checked at COMMIT, which a batch shares: the writer
    /// must charge a violation to the job that made it, not to its batch-mates.
    @Test func unresolvedDeferredForeignKeyFailsOnlyItsJob() throws {
        try withItemDatabase { database, _ throws in
            let outcomes = try runInOneBatch(database, [
                insertItem(1),
                insertItem(2, parent: 99),       // no item 99: violation
                insertItem(3, parent: 1),
                { connection in                   // resolved within the job: fine
                    try insertItem(4, parent: 5)(connection)
                    try insertItem(5)(connection)
                },
            ])
            #expect(outcomes.filter { (try? $0.value.get()) == nil }.map(\.key) == [1])
            if case .failure(let error as SQLiteError)? = outcomes[1] {
                #expect(error.code == .constraintForeignKey)
            }
            #expect(try itemKeys(database) == [1, 3, 4, 5])
        }
    }

    @Test func unresolvedDeferredForeignKeyOfALoneWriteFailsAtCommit() throws {
        try withItemDatabase { database, _ throws in
            let error = #expect(throws: SQLiteError.self) { try database.write(insertItem(2, parent: 99)) }
            #expect(error?.code == .constraintForeignKey)
            #expect(try itemKeys(database) == [])
            try database.write(insertItem(3))
            #expect(try itemKeys(database) == [3], "the writer goes on after a failed commit")
        }
    }
}
