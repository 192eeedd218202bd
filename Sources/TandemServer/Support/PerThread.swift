import Foundation
import Synchronization
import TandemCore

/// One value per thread, made on first use, so hot paths touched by every request need no
/// shared lock. With 64 worker threads on two cores, a shared `Mutex` is often held by a
/// preempted thread and the others spin in its slow path (measured: 10–17% of server CPU under
/// lookup load for one such lock).
///
/// `everyThread` lists all values made so far, for readers that aggregate (metrics).
final class PerThread<Value: AnyObject & Sendable>: Sendable {
    private let key: pthread_key_t
    private let all = Locked<[Value]>([])
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        self.key = key
        self.make = make
    }

    deinit { pthread_key_delete(key) }

    /// The calling thread's value.
    var current: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        let value = make()
        all.withLock { $0.append(value) }
        pthread_setspecific(key, Unmanaged.passUnretained(value).toOpaque())
        return value
    }

    var everyThread: [Value] { all.withLock { $0 } }
}
