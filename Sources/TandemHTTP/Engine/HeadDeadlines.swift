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

    /// Which queue: connections that have not made a request yet (new, silent, or a first head
    /// unfinished), and kept-alive ones waiting for their next. Eviction (`ServiceLoop.makeRoom`)
    /// takes from the first before the second; in one queue, under a flood of connections
    /// closed as fast as they came, the entries after an idle keep-alive connection were almost
    /// all stale, a scan of the first 1,024 found no silent one, and the keep-alive connections
    /// were closed first (stop 44's fourth review).
    enum Kind { case first, next }

    private var queues = [Queue(), Queue()]
    private var nextArming: UInt64 = 1

    /// Queues a deadline `seconds` from now for `connection`; the arming number to keep with
    /// the connection (an earlier entry for it no longer counts).
    mutating func arm(_ connection: UInt64, seconds: Int, kind: Kind) -> UInt64 {
        let arming = nextArming
        nextArming += 1
        queues[kind == .first ? 0 : 1].append(Entry(connection: connection, arming: arming,
                                                    due: Self.nowMicroseconds() + UInt64(seconds) * 1_000_000))
        return arming
    }

    /// Takes the entries whose deadline has passed, in order in each queue, and hands each to
    /// `expired` (which checks that its connection is still open and its arming still current).
    mutating func expire(_ expired: (Entry) -> Void) {
        guard queues[0].count > 0 || queues[1].count > 0 else { return }
        let now = Self.nowMicroseconds()
        queues[0].expire(now: now, expired)
        queues[1].expire(now: now, expired)
    }

    /// The connection of `kind` armed longest ago that `choose` takes, looking at most at
    /// `limit` entries: entries no longer `current` at the front are dropped on the way (their
    /// connection closed or was armed again). Arming order is also the order connections began
    /// to wait for a head, so this is the one that has waited longest.
    mutating func firstArmed(_ kind: Kind, current: (Entry) -> Bool, choose: (Entry) -> Bool, limit: Int = 1_024) -> UInt64? {
        queues[kind == .first ? 0 : 1].firstArmed(current: current, choose: choose, limit: limit)
    }

    var count: Int { queues[0].count + queues[1].count }

    static func nowMicroseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1_000
    }

    /// Entries in arming order, taken from the front.
    private struct Queue {
        private var entries: [Entry] = []
        private var front = 0

        var count: Int { entries.count - front }

        mutating func append(_ entry: Entry) { entries.append(entry) }

        mutating func expire(now: UInt64, _ expired: (Entry) -> Void) {
            while front < entries.count, entries[front].due <= now {
                let entry = entries[front]
                front += 1
                expired(entry)
            }
            compact()
        }

        mutating func firstArmed(current: (Entry) -> Bool, choose: (Entry) -> Bool, limit: Int) -> UInt64? {
            while front < entries.count, !current(entries[front]) { front += 1 }
            compact()
            var index = front
            while index < entries.count, index - front < limit {
                let entry = entries[index]
                if current(entry), choose(entry) { return entry.connection }
                index += 1
            }
            return nil
        }

        private mutating func compact() {
            if front == entries.count {
                entries.removeAll(keepingCapacity: entries.capacity <= 4_096)
                front = 0
            } else if front >= 1_024 && front * 2 >= entries.count {
                entries.removeFirst(front)
                front = 0
            }
        }
    }
}
