import CWebSockets
import TandemCore

/// Responses finished on worker threads, waiting for the service thread to write them, and
/// WebSocket connections asking for its attention (output queued, close asked, reading to
/// resume).
///
/// A worker appends its response and, if the queue was empty, wakes the service thread with
/// `lws_cancel_service`, which raises `LWS_CALLBACK_EVENT_WAIT_CANCELLED` there; the service
/// thread then takes the whole batch at once. The lws context pointer lives under the same
/// lock so that no worker can touch it after `close()`, when the context is being destroyed.
final class CompletionQueue: ChannelAttention {
    struct Completion: Sendable {
        var connectionID: UInt64
        var requestID: UInt64
        var response: HTTPResponse
        /// An admission decision (`HTTPResponder.admit`), not a response: `response` is the
        /// refusal, or `nil` with the body to be read.
        var admission: Admission? = nil
    }

    enum Admission: Sendable {
        case admitted(holder: String?)
        case refused
    }

    private struct State: ~Copyable {
        var items: [Completion] = []
        var attention: [UInt64] = []
        var open = false
    }

    /// The lws context, which lws allows to be woken from any thread.
    struct UnsafeContext: @unchecked Sendable {
        var pointer: OpaquePointer
    }

    private let state = Locked(State())
    /// Guards the context separately, so the wake-up system call happens outside `state`'s
    /// lock, which the service thread takes for every batch.
    private let context = Locked<UnsafeContext?>(nil)

    /// Makes `context` the one to wake; called once the context exists.
    func open(context pointer: OpaquePointer) {
        context.withLock { $0 = UnsafeContext(pointer: pointer) }
        state.withLock { $0.open = true }
    }

    /// Drops pending completions and forgets the context; later posts are discarded, and no
    /// wake-up is under way once this returns.
    func close() {
        state.withLock { state in
            state.open = false
            state.items.removeAll()
            state.attention.removeAll()
        }
        context.withLock { $0 = nil }
    }

    /// Queues a finished response and wakes the service thread if it was not already due.
    func post(_ completion: Completion) {
        let first = state.withLock { state in
            guard state.open else { return false }
            state.items.append(completion)
            return state.items.count + state.attention.count == 1
        }
        if first { wake() }
    }

    /// Asks the service thread to look at WebSocket connection `channelID`.
    func attention(_ channelID: UInt64) {
        let first = state.withLock { state in
            guard state.open else { return false }
            state.attention.append(channelID)
            return state.items.count + state.attention.count == 1
        }
        if first { wake() }
    }

    /// Wakes the service thread (also used without a completion, for shutdown progress).
    func wake() {
        context.withLock { context in
            if let context {
                lws_cancel_service(context.pointer)
            }
        }
    }

    /// Moves every queued completion into `batch` (which must be empty), handing the queue
    /// `batch`'s old storage so its capacity is reused.
    func takeAll(into batch: inout [Completion], attention: inout [UInt64]) {
        state.withLock { state in
            swap(&state.items, &batch)
            swap(&state.attention, &attention)
        }
    }
}
