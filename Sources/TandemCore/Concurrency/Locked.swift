#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A value behind a lock whose waiters sleep at once: glibc's `pthread_mutex_t` (error-checking).
///
/// Every module locks with it instead of `Synchronization.Mutex` (decisions E32). On Linux,
/// `Mutex` (Swift 6.3) spins up to 1,000 `pause` instructions before it sleeps on a
/// priority-inheritance futex (swiftlang/swift issue 88440, changed after 6.3). With more
/// threads than cores the holder is often descheduled while others spin: in the bus figure's
/// fan-out, a session of 32 spread over three nodes, that spinning was 18% of the machine's
/// CPU. The API is `Mutex`'s: `withLock` runs `body` with the value, the lock held; `body`
/// must not take the same lock again: that stops the process with a message. A closure kept
/// in one goes inside a class or an array (decisions N51).
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: consuming sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Error-checking, so a thread taking the lock it holds stops with a message (as `Mutex`
        // did) instead of waiting forever; glibc's error-checking mutex does not spin either.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held; returns what `body` returns, or throws what it throws.
    @inline(__always)
    package func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Locked.withLock: the lock is already held by this thread (error \(locked))")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
