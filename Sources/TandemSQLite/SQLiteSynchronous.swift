/// How hard SQLite works to make a commit durable (`PRAGMA synchronous`, in WAL mode).
///
/// - ``full``: the WAL is synced at every commit. An acknowledged write survives power loss.
///   Tandem's default (DESIGN.md §4).
/// - ``normal``: the WAL is synced only at checkpoints. The database stays consistent, but
///   the last commits before a power loss may be lost. Much cheaper per commit.
///
/// Source: https://www.sqlite.org/pragma.html#pragma_synchronous
public enum SQLiteSynchronous: String, Sendable {
    case full = "FULL"
    case normal = "NORMAL"
}
