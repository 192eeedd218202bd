#if canImport(Glibc)
import Glibc
#endif

/// The head deadlines of the service thread's connections, in the order they were armed
/// (decisions E36).
///
/// Every deadline is `headTimeout` after it is armed, so arming order is deadline order and a
/// queue is enough: arming appends, and each turn of the loop looks at the front only. It
/// replaces a libwebsockets timer per connection (`lws_set_timer_usecs`): lws 4.1.6 keeps every
/// timer of every connection in one sorted list and walks it to insert one, and a deadline 5 s
/// out goes at the end of it, so each new connection and each answer on a kept-alive one walked
/// every connection open (`perf`: 91% of a server flooded with 12,000 connections in
/// `lws_dll2_add_sorted`). A connection whose deadline passes gets an lws timer due at once,
/// which goes at the front of lws' list, and its `LWS_CALLBACK_TIMER` does what the timer did.
///
/// An entry stays queued when its connection closes or is armed again; it is recognised as
/// stale by its arming number when it reaches the front. Service thread only.
struct HeadDeadlines {
    struct Entry {
        var connection: UInt64
        var arming: UInt64
        var due: UInt64
    }

    private var entries: [Entry] = []
    private var front = 0
    private var nextArming: UInt64 = 1

    /// Queues a deadline `seconds` from now for `connection`; the arming number to keep with
    /// the connection (an earlier entry for it no longer counts).
    mutating func arm(_ connection: UInt64, seconds: Int) -> UInt64 {
        let arming = nextArming
        nextArming += 1
        entries.append(Entry(connection: connection, arming: arming, due: Self.nowMicroseconds() + UInt64(seconds) * 1_000_000))
        return arming
    }

    /// Takes the entries whose deadline has passed, in order, and hands each to `expired`
    /// (which checks that its connection is still open and its arming still current).
    mutating func expire(_ expired: (Entry) -> Void) {
        guard front < entries.count else { return }
        let now = Self.nowMicroseconds()
        while front < entries.count, entries[front].due <= now {
            let entry = entries[front]
            front += 1
            expired(entry)
        }
        if front == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= 4_096)
            front = 0
        } else if front >= 1_024 && front * 2 >= entries.count {
            entries.removeFirst(front)
            front = 0
        }
    }

    /// The connection armed longest ago that `choose` takes, looking at most at `limit`
    /// entries: entries no longer `current` at the front are dropped on the way (their
    /// connection closed or was armed again). Arming order is also the order connections began
    /// to wait for a head, so this is the one that has waited longest
    /// (`ServiceLoop.makeRoom`).
    mutating func firstArmed(current: (Entry) -> Bool, choose: (Entry) -> Bool, limit: Int = 1_024) -> UInt64? {
        while front < entries.count, !current(entries[front]) { front += 1 }
        var index = front
        while index < entries.count, index - front < limit {
            let entry = entries[index]
            if current(entry), choose(entry) { return entry.connection }
            index += 1
        }
        return nil
    }

    var count: Int { entries.count - front }

    static func nowMicroseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1_000
    }
}
