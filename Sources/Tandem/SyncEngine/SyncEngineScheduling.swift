internal import Foundation

/// The engine's background tasks and scheduling flags.
final class Background: @unchecked Sendable {
    private let lock = NSLock()
    private var tasks: [Task<Void, Never>] = []
    private var sendGeneration = 0
    private var fetchScheduled = false
    private var cancelled = false

    func add(_ task: Task<Void, Never>) {
        let cancelNow = lock.withLock { () -> Bool in
            tasks.removeAll { $0.isCancelled }
            if cancelled { return true }
            tasks.append(task)
            if tasks.count > 64 { tasks.removeFirst(tasks.count - 64) }
            return false
        }
        if cancelNow { task.cancel() }
    }

    func cancelAll() {
        let all = lock.withLock { () -> [Task<Void, Never>] in
            cancelled = true
            defer { tasks = [] }
            return tasks
        }
        for task in all { task.cancel() }
    }

    var isCancelled: Bool { lock.withLock { cancelled } }
    func nextSendGeneration() -> Int { lock.withLock { sendGeneration += 1; return sendGeneration } }
    func isLatestSend(_ generation: Int) -> Bool { lock.withLock { sendGeneration == generation } }
    private var accountChecked = false
    /// True once per engine lifetime (until `resetAccountCheck`).
    func needsAccountCheck() -> Bool { lock.withLock { if accountChecked { return false }; accountChecked = true; return true } }
    func resetAccountCheck() { lock.withLock { accountChecked = false } }
    func markFetchScheduled() -> Bool { lock.withLock { if fetchScheduled { return false }; fetchScheduled = true; return true } }
    func clearFetchScheduled() { lock.withLock { fetchScheduled = false } }
}

/// A first-come, first-served lock for async code: one fetch or send at a time.
final class AsyncGate: @unchecked Sendable {
    private let lock = NSLock()
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runNow = lock.withLock { () -> Bool in
                if !locked { locked = true; return true }
                waiters.append(continuation)
                return false
            }
            if runNow { continuation.resume() }
        }
    }

    func release() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty { locked = false; return nil }
            return waiters.removeFirst()
        }
        next?.resume()
    }
}
