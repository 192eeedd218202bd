import TandemCore

/// Events of one server WebSocket waiting for the `WebSocketResponder`, delivered on the worker
/// pool one at a time and in order.
///
/// The service thread posts; when the mailbox was idle it is scheduled on the pool, and the
/// worker that takes it runs events until it is empty (or its turn is over, then it goes to the
/// back of the pool's queue). At most one worker holds a mailbox at any time, which gives
/// per-connection order without a thread per connection.
final class WebSocketMailbox: Sendable {
    enum Event: Sendable {
        case open
        case message(WebSocketMessage)
        case closed(WebSocketClose)
    }

    private enum Verdict {
        case undecided, accepted, refused
    }

    private struct State: ~Copyable {
        var events = RingBuffer<Event>()
        var scheduled = false
        var backlogBytes = 0
        /// The service thread stopped reading this connection and waits to hear the backlog halved.
        var receivePaused = false
        var verdict = Verdict.undecided
    }

    /// Events one worker runs before letting other connections' work go first.
    static let turnLength = 64

    let connection: WebSocketConnection
    private let responder: any WebSocketResponder
    private let backlogLimit: Int
    private let state = Locked(State())

    init(connection: WebSocketConnection, responder: any WebSocketResponder, backlogLimit: Int) {
        self.connection = connection
        self.responder = responder
        self.backlogLimit = backlogLimit
    }

    /// Service thread: queues `event`. `schedule`: the mailbox was idle and must be handed to
    /// the pool. `pause`: the backlog is over its limit; the caller stops reading and the
    /// mailbox remembers to ask for `attention` once the backlog has halved.
    func post(_ event: Event) -> (schedule: Bool, pause: Bool) {
        state.withLock { state in
            if case .message(let message) = event {
                state.backlogBytes += message.byteCount
            }
            state.events.append(event)
            let schedule = !state.scheduled
            state.scheduled = true
            var pause = false
            if state.backlogBytes > backlogLimit && !state.receivePaused {
                state.receivePaused = true
                pause = true
            }
            return (schedule, pause)
        }
    }

    /// Whether reading stays paused: the backlog has not halved since it went over the limit.
    var holdsReceive: Bool { state.withLock { $0.receivePaused } }

    /// Worker: runs up to `turnLength` events. `more`: events remain and the mailbox must be
    /// scheduled again. `resume`: reading was paused and the backlog has halved.
    func run() -> (more: Bool, resume: Bool) {
        var resume = false
        for _ in 0..<Self.turnLength {
            let taken: (Event, Verdict)? = state.withLock { state in
                guard let event = state.events.removeFirst() else {
                    state.scheduled = false
                    return nil
                }
                if case .message(let message) = event {
                    state.backlogBytes -= message.byteCount
                    if state.receivePaused && state.backlogBytes <= backlogLimit / 2 {
                        state.receivePaused = false
                        resume = true
                    }
                }
                return (event, state.verdict)
            }
            guard let (event, verdict) = taken else { return (false, resume) }
            handle(event, verdict: verdict)
        }
        return (state.withLock { state in
            state.scheduled = !state.events.isEmpty
            return state.scheduled
        }, resume)
    }

    private func handle(_ event: Event, verdict: Verdict) {
        switch (event, verdict) {
        case (.open, _):
            let decision = responder.accept(connection)
            state.withLock { $0.verdict = decision == .accept ? .accepted : .refused }
            if case .refuse(let close) = decision {
                connection.channel.requestClose(close, immediate: false)
            }
        case (.message(let message), .accepted):
            responder.received(message, on: connection)
        case (.closed(let close), .accepted):
            responder.closed(connection, with: close)
        default:
            // Refused: what was held is dropped and the responder hears nothing more.
            break
        }
    }
}
