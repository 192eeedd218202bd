/// A connection passed between threads by an owner that lets only one thread use it at a
/// time: the writer thread for the writer connection, the pool's check-out for readers.
///
/// Thread safety: `@unchecked` because ``SQLiteConnection`` is not `Sendable`; the owners
/// named above are what make the hand-offs safe.
final class SQLiteConfinedConnection: @unchecked Sendable {
    let connection: SQLiteConnection

    init(_ connection: sending SQLiteConnection) {
        self.connection = connection
    }
}
