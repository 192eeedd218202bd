import Foundation

/// A one-way flag threads can wait on: set once when the server has stopped.
final class StopSignal: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var isSet = false

    func set() {
        condition.lock()
        isSet = true
        condition.broadcast()
        condition.unlock()
    }

    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return isSet
    }

    func wait() {
        condition.lock()
        while !isSet { condition.wait() }
        condition.unlock()
    }

    /// Waits at most `seconds`; `true` if the flag is set.
    func wait(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !isSet {
            if !condition.wait(until: deadline) { return isSet }
        }
        return true
    }
}
