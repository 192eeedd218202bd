internal import Dispatch
internal import Foundation
internal import Synchronization
import TandemCore

/// Read-only connections: each thread that reads gets its own connection and keeps it, so the
/// hot path takes no lock (a shared free list under a mutex made 64 worker threads on two cores
/// spin in the lock's slow path; measured at about 15% of server CPU under lookup load).
///
/// A nested `withConnection` on the same thread, or a thread beyond `maxConnections`, borrows
/// from a small shared overflow pool instead. `close()` waits for reads in progress, then closes
/// every connection.
final class SQLiteReaderPool: Sendable {
    /// One thread's connection; only that thread touches `busy`.
    private final class Slot: @unchecked Sendable {
        let connection: SQLiteConnection
        var busy = false

        init(_ connection: SQLiteConnection) { self.connection = connection }
    }

    private let path: String
    private let maxConnections: Int
    private let key: pthread_key_t
    private let slots = Locked<[Slot]>([])
    private let overflow: SharedPool
    private let active = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    /// - Parameter maxConnections: threads with a connection of their own at most; nil: a
    ///   thirty-second of the descriptor limit (`RLIMIT_NOFILE`), at most 256. Each takes two
    ///   descriptors (the database file and its WAL), so together they take at most half of
    ///   the eighth the HTTP layer leaves to the rest of the server (decisions E34, E35).
    init(path: String, count: Int, maxConnections: Int? = nil) throws(SQLiteError) {
        self.path = path
        self.maxConnections = maxConnections ?? Self.defaultMaxConnections
        var key = pthread_key_t()
        guard pthread_key_create(&key, nil) == 0 else {
            throw SQLiteError(code: .nomem, message: "pthread_key_create failed")
        }
        self.key = key
        overflow = try SharedPool(path: path, count: max(1, count))
    }

    static var defaultMaxConnections: Int {
        var descriptors = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &descriptors) == 0,
              descriptors.rlim_cur < 256 * 32 else { return 256 }
        return max(1, Int(descriptors.rlim_cur) / 32)
    }

    /// A read-only connection, ready to read: its database file, its WAL file and the WAL's
    /// index are open (SQLite opens the last two at the first read, which out of descriptors
    /// failed with "unable to open database file" mid-request).
    static func open(path: String) throws(SQLiteError) -> SQLiteConnection {
        // No mmap: every thread's connection would map the file again, and resident mapped
        // pages count once per mapping (6.8 GiB VmHWM on the 1M-record benchmark, no faster).
        let connection = try SQLiteConnection(path: path, readOnly: true)
        do {
            // Reads the header through the WAL.
            _ = try connection.firstRow("PRAGMA schema_version") { $0.int64(0) }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        // Count in before looking at `closed`; close() sets `closed` before waiting for zero.
        active.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { active.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        guard !closed.load(ordering: .sequentiallyConsistent) else { throw SQLiteError.closed("the database") }
        guard let slot = threadSlot(), !slot.busy else {
            return try overflow.withConnection(body)
        }
        slot.busy = true
        defer { slot.busy = false }
        return try body(slot.connection)
    }

    /// This thread's slot, created on first use; nil past `maxConnections`, or when a
    /// connection cannot be opened now (the overflow pool, opened with the database, serves
    /// instead, and a later read tries again).
    ///
    /// A connection is ready to read before it is kept: its database file, its WAL file and
    /// the shared memory index are open. Out of descriptors (`EMFILE`), opening either file
    /// failed, and reads answered "unable to open database file" (stop 44's review: 42,457
    /// lookups of 78,358 failed 503 under a flood of connections with 256 descriptors).
    private func threadSlot() -> Slot? {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Slot>.fromOpaque(pointer).takeUnretainedValue()
        }
        guard slots.withLock({ $0.count }) < maxConnections,
              let connection = try? Self.open(path: path) else { return nil }
        let slot = Slot(connection)
        slots.withLock { $0.append(slot) }
        pthread_setspecific(key, Unmanaged.passUnretained(slot).toOpaque())
        return slot
    }

    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        while active.load(ordering: .sequentiallyConsistent) > 0 { usleep(1_000) }
        let all = slots.withLock { slots in
            defer { slots.removeAll() }
            return slots
        }
        for slot in all { slot.connection.close() }
        overflow.close()
        pthread_key_delete(key)
    }
}

/// A fixed set of connections lent one at a time (the overflow path of `SQLiteReaderPool`).
private final class SharedPool: Sendable {
    private let idle: Locked<[SQLiteConfinedConnection]>
    private let available: DispatchSemaphore
    private let size: Int

    init(path: String, count: Int) throws(SQLiteError) {
        var connections: [SQLiteConfinedConnection] = []
        for _ in 0..<count { connections.append(SQLiteConfinedConnection(try SQLiteReaderPool.open(path: path))) }
        size = count
        available = DispatchSemaphore(value: count)
        idle = Locked(connections)
    }

    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        available.wait()
        guard let lent = idle.withLock({ $0.popLast() }) else {
            available.signal()
            throw SQLiteError.closed("the database")
        }
        defer {
            idle.withLock { $0.append(lent) }
            available.signal()
        }
        return try body(lent.connection)
    }

    func close() {
        for _ in 0..<size { available.wait() }
        let all = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        for lent in all { lent.connection.close() }
        for _ in 0..<size { available.signal() }
    }
}
