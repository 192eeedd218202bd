import Synchronization

/// `withTimeout` ran out of time.
public struct TimedOut: Error, CustomStringConvertible {
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s" }
}

/// Runs `body` with a time limit: its value (or error), or `TimedOut` once `seconds` pass.
///
/// Unlike a task group, it does not wait for a body that ignores cancellation (one awaiting
/// another task's value, or a continuation nobody resumes): the body is cancelled and left to
/// finish on its own, so a hang fails the test instead of hanging the run.
public func withTimeout<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = Race<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        let timer = Task {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            return race.finish(.failure(TimedOut(seconds: seconds)))
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            if race.finish(result) { timer.cancel() }
        }
        Task {
            if await timer.value { work.cancel() }
        }
    }
}

/// The first result wins; later ones are dropped.
private final class Race<T: Sendable>: Sendable {
    private let waiting = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        waiting.withLock { $0 = continuation }
    }

    /// Resumes the caller with `result` unless someone already did; whether this one did.
    func finish(_ result: Result<T, any Error>) -> Bool {
        guard let continuation = waiting.withLock({ waiting in
            defer { waiting = nil }
            return waiting
        }) else { return false }
        continuation.resume(with: result)
        return true
    }
}
