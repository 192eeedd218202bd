import Foundation

/// Reads a table of the source on a thread of its own while the caller writes the batch before
/// into the target (decisions P65): `tandem migrate` then waits for the slower side only, not
/// for the sum of both. At most ``capacity`` batches wait between the two, so a fast reader
/// cannot fill memory (a batch is ``StoreCopy/batchSize`` rows). The verification reads the
/// target back the same way, hashing one batch while the next is read (P70).
///
/// The source is used by the reader thread alone from the start of ``scan(_:_:batchSize:_:)``
/// until it returns (a connection is never used by two threads at once: SQLite's is opened
/// `NOMUTEX`, libpq's is not thread-safe); the target stays on the caller's thread.
enum ScanAhead {
    /// Batches read but not yet written, at most.
    static let capacity = 2

    /// Calls `body` on the caller's thread with each batch of `table` as the source's
    /// `scan(_:batchSize:_:)` reads them on another thread, in the same order.
    ///
    /// - Throws: what the source's scan throws (the batches before it were handed to `body`), or
    ///   what `body` throws (the reader then stops at its next batch). Either way the reader has
    ///   finished with the source when this returns.
    static func scan(_ source: any CopyDatabase, _ table: CopyTable, batchSize: Int, _ body: ([[CopyValue]]) throws -> Void) throws {
        let handOff = BatchHandOff(capacity: capacity)
        let confined = ConfinedSource(source)
        let reader = Thread {
            do {
                try confined.source.scan(table, batchSize: batchSize) { batch in
                    guard handOff.put(batch) else { throw BatchHandOff.Stopped() }
                }
                handOff.finish(nil)
            } catch {
                handOff.finish(error)
            }
        }
        reader.stackSize = 8 << 20
        reader.start()
        defer {
            handOff.stop()
            handOff.waitUntilFinished()
        }
        while let batch = try handOff.take() { try body(batch) }
    }
}

/// The source handed to the reader thread, which alone uses it until ``ScanAhead`` returns.
private final class ConfinedSource: @unchecked Sendable {
    let source: any CopyDatabase
    init(_ source: any CopyDatabase) { self.source = source }
}

/// A bounded queue of batches from one reader to one writer, with the reader's end or error.
final class BatchHandOff: @unchecked Sendable {
    /// Thrown inside the reader when the writer stopped taking batches.
    struct Stopped: Error {}

    private let condition = NSCondition()
    private let capacity: Int
    private var waiting: [[[CopyValue]]] = []
    private var finished = false
    private var failure: (any Error)?
    private var stopped = false

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds a batch, waiting while `capacity` batches wait; false when the writer has stopped.
    func put(_ batch: [[CopyValue]]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting.count >= capacity && !stopped { condition.wait() }
        guard !stopped else { return false }
        waiting.append(batch)
        condition.broadcast()
        return true
    }

    /// The reader's end: `error` nil when every batch was put.
    func finish(_ error: (any Error)?) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        failure = error
        condition.broadcast()
    }

    /// The next batch in order; nil after the last one.
    /// - Throws: the reader's error, once the batches put before it were taken.
    func take() throws -> [[CopyValue]]? {
        condition.lock()
        defer { condition.unlock() }
        while waiting.isEmpty && !finished { condition.wait() }
        if !waiting.isEmpty {
            let batch = waiting.removeFirst()
            condition.broadcast()
            return batch
        }
        if let failure { throw failure }
        return nil
    }

    /// The writer takes no more batches: a waiting or later `put` returns false.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        waiting.removeAll()
        condition.broadcast()
    }

    /// Waits until the reader has finished (`finish` called).
    func waitUntilFinished() {
        condition.lock()
        defer { condition.unlock() }
        while !finished { condition.wait() }
    }
}
