#if canImport(Glibc)
internal import Glibc
#endif

/// A value behind a lock whose waiters sleep at once: glibc's default `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex` where many threads contend for one lock (a group
/// session's state, the stream registry, a WebSocket's send queue, the completion queue). On
/// Linux, `Mutex` (Swift 6.3) spins up to 1,000 `pause` instructions before it sleeps on a
/// priority-inheritance futex (swiftlang/swift issue 88440, changed after 6.3). With more
/// threads than cores the holder is often descheduled while others spin: in the bus figure's
/// fan-out, a session of 32 spread over three nodes, that spinning was 18% of the machine's
/// CPU (decisions E32). The API is `Mutex`'s: `withLock` runs `body` with the value, the lock
/// held; `body` must not take the same lock again (it is not recursive).
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: consuming sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held; returns what `body` returns, or throws what it throws.
    @inline(__always)
    package func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
