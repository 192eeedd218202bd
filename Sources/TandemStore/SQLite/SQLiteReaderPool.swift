internal import Dispatch
internal import Synchronization

/// Read-only connections lent to one caller at a time.
final class SQLiteReaderPool: Sendable {
    private struct State {
        var idle: [SQLiteConfinedConnection]
        var isClosed = false
    }

    private let state: Mutex<State>
    /// One permit per idle connection; a caller holding a permit is sure to find one.
    private let available: DispatchSemaphore
    private let size: Int

    /// Opens `count` read-only connections to `path`.
    init(path: String, count: Int) throws(SQLiteError) {
        var idle: [SQLiteConfinedConnection] = []
        for _ in 0..<count {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            try connection.execute(SQLiteDatabase.memoryMapPragma)
            idle.append(SQLiteConfinedConnection(connection))
        }
        size = count
        available = DispatchSemaphore(value: count)
        state = Mutex(State(idle: idle))
    }

    /// Runs `body` with a connection of its own, waiting while all are lent out.
    ///
    /// - Throws: `.misuse` once the pool is closed; whatever `body` throws.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        available.wait()
        let lent = state.withLock { state in state.isClosed ? nil : state.idle.popLast() }
        guard let lent else {
            available.signal()
            throw SQLiteError.closed("the database")
        }
        defer {
            state.withLock { $0.idle.append(lent) }
            available.signal()
        }
        return try body(lent.connection)
    }

    /// Refuses new reads, waits for reads in progress, and closes every connection.
    func close() {
        state.withLock { $0.isClosed = true }
        for _ in 0..<size { available.wait() }
        let idle = state.withLock { state in
            defer { state.idle.removeAll() }
            return state.idle
        }
        for lent in idle { lent.connection.close() }
        // Give the permits back: callers already waiting wake up, see the pool closed, throw.
        for _ in 0..<size { available.signal() }
    }
}
