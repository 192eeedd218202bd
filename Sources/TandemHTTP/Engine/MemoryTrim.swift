import Dispatch
import CWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// Gives memory back to the system once a flood of connections has passed (decisions E38).
///
/// Each connection costs lws and the loop a few KiB, freed when it closes; glibc keeps freed
/// memory in its arenas, so a server that had held 12,000 connections stayed at 178 MiB
/// resident after they closed, against 41 MiB before (review 53). `malloc_trim(0)` returns the
/// free pages of every arena. It runs off the service thread (it takes each arena's lock in
/// turn) when at least `floodSize` connections, and at least half of the most open since the
/// last trim, have gone, and have stayed gone for `settle`; at most every `interval`.
struct MemoryTrim {
    /// Most connections open at once since the last trim.
    private var peak = 0
    private var last: ContinuousClock.Instant?
    /// When to trim, once a flood has passed.
    private var due: ContinuousClock.Instant?
    static let floodSize = 1_000
    static let settle = Duration.seconds(1)
    static let interval = Duration.seconds(10)

    /// After each turn of the loop (at least every 50 ms: E33's tick), with the connections open.
    mutating func afterTurn(open: Int) {
        peak = max(peak, open)
        guard peak - open >= Self.floodSize, open <= peak / 2 else {
            due = nil
            return
        }
        let now = ContinuousClock.now
        guard let due else {
            self.due = max(now + Self.settle, last.map { $0 + Self.interval } ?? now)
            return
        }
        guard now >= due else { return }
        self.due = nil
        last = now
        peak = open
        DispatchQueue.global(qos: .utility).async { _ = malloc_trim(0) }
    }
}
