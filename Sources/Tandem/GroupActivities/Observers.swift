import Foundation
import TandemCore

/// Several `AsyncStream`s fed the same values; each new stream starts with the current value
/// when one is given.
final class Observers<Value: Sendable>: Sendable {
    private let continuations = Locked<[UUID: AsyncStream<Value>.Continuation]>([:])
    private let finished = Locked(false)

    func stream(initial: Value?) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let id = UUID()
        if let initial { continuation.yield(initial) }
        if finished.withLock({ $0 }) {
            continuation.finish()
            return stream
        }
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.continuations.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    func yield(_ value: Value) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(value) }
    }

    func finish() {
        finished.withLock { $0 = true }
        for continuation in continuations.withLock({ all in defer { all = [:] }; return Array(all.values) }) { continuation.finish() }
    }
}

/// One awaited answer, which may arrive before or after someone waits for it.
final class Reply<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, TandemError>?
        var waiter: CheckedContinuation<Value, any Error>?
    }
    private let state = Locked(State())

    func resolve(_ result: Result<Value, TandemError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result.mapError { $0 as any Error })
    }

    func wait() async throws(TandemError) -> Value {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let ready = state.withLock { state -> Result<Value, TandemError>? in
                    if state.result == nil { state.waiter = continuation }
                    return state.result
                }
                if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
            }
        } catch {
            throw (error as? TandemError) ?? TandemError(.internalError, "\(error)")
        }
    }
}
