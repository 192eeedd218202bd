import Synchronization
import CWebSockets

/// Responses finished on worker threads, waiting for the service thread to write them.
///
/// A worker appends its response and, if the queue was empty, wakes the service thread with
/// `lws_cancel_service`, which raises `LWS_CALLBACK_EVENT_WAIT_CANCELLED` there; the service
/// thread then takes the whole batch at once. The lws context pointer lives under the same
/// lock so that no worker can touch it after `close()`, when the context is being destroyed.
final class CompletionQueue: Sendable {
    struct Completion: Sendable {
        var connectionID: UInt64
        var requestID: UInt64
        var response: HTTPResponse
    }

    private struct State: ~Copyable {
        var items: [Completion] = []
        var context: UnsafeContext?
    }

    /// The lws context, which lws allows to be woken from any thread.
    struct UnsafeContext: @unchecked Sendable {
        var pointer: OpaquePointer
    }

    private let state = Mutex(State())

    /// Makes `context` the one to wake; called once the context exists.
    func open(context: OpaquePointer) {
        state.withLock { $0.context = UnsafeContext(pointer: context) }
    }

    /// Drops pending completions and forgets the context; later posts are discarded.
    func close() {
        state.withLock { state in
            state.context = nil
            state.items.removeAll()
        }
    }

    /// Queues a finished response and wakes the service thread if it was not already due.
    func post(_ completion: Completion) {
        state.withLock { state in
            guard let context = state.context else { return }
            state.items.append(completion)
            if state.items.count == 1 {
                lws_cancel_service(context.pointer)
            }
        }
    }

    /// Wakes the service thread without a completion (shutdown progress).
    func wake() {
        state.withLock { state in
            if let context = state.context {
                lws_cancel_service(context.pointer)
            }
        }
    }

    /// Moves every queued completion into `batch` (which must be empty), handing the queue
    /// `batch`'s old storage so its capacity is reused.
    func takeAll(into batch: inout [Completion]) {
        state.withLock { state in
            swap(&state.items, &batch)
        }
    }
}
