import CLibEV
import CWebSockets

/// The epoll loop one libwebsockets context runs on, owned by its service thread (decisions E33).
///
/// libwebsockets 4.1's own loop calls `poll()` over every descriptor each time it wakes, so its
/// cost grows with the open connections: with 2,000 WebSocket clients, half of the server's CPU
/// went to `sock_poll`/`tcp_poll`. The same library runs on libev, whose Linux backend is epoll;
/// Debian's `libwebsockets-dev` is built with it as a plugin (`libwebsockets-evlib-ev`) and pulls
/// in `libev-dev`. The loop is created here and handed to lws as a *foreign* loop, so that:
/// - the service thread still turns the loop one iteration at a time (`runOnce()`) and checks its
///   own exit flag between iterations, as it did around `lws_service`;
/// - lws installs no signal watcher (with a loop of its own, it takes SIGINT), leaving signals to
///   the process.
///
/// lws 4.1.6's libev plugin keeps its timeouts on one `ev_timer` that it re-arms only while the
/// timer is idle; a 50 ms tick of our own (`tandem_tick` in CWebSockets' shim) keeps that timer's
/// next expiry close, so every lws timeout (idle connections, pings, lingering closes) fires at
/// most 50 ms late.
///
/// Lifecycle: `init` → `configure(_:)` on the creation info before `lws_create_context` →
/// `run(_:while:)` on the service thread → after `lws_context_destroy`, `destroy()` there.
final class EventLoop: @unchecked Sendable {  // one thread at a time: made, then handed to its service thread
    private let loop: OpaquePointer
    /// lws reads `foreign_loops` (an array of one loop pointer) during `lws_create_context`.
    private let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let tick: UnsafeMutablePointer<tandem_tick>

    /// `nil` when libev cannot make an epoll loop (no epoll: not Linux, or out of descriptors).
    init?() {
        guard let loop = ev_loop_new(UInt32(EVBACKEND_EPOLL)) else { return nil }
        self.loop = loop
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))
        tick = .allocate(capacity: 1)
        tick.initialize(to: tandem_tick())
    }

    deinit {
        foreignLoops.deallocate()
        tick.deallocate()
    }

    /// Makes the context about to be created from `info` run on this loop.
    func configure(_ info: inout lws_context_creation_info) {
        info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
        info.foreign_loops = foreignLoops
    }

    /// Serves `context` on the calling thread (its service thread) while `keepGoing()`, which is
    /// asked after each turn of the loop: after events, the nearest lws timeout or the tick.
    /// `lws_cancel_service` from another thread ends a wait.
    func run(_ context: OpaquePointer, while keepGoing: () -> Bool) {
        tandem_tick_start(tick, context)
        // An event, after which lws arms its timer (for the tick, at the latest).
        lws_cancel_service(context)
        while keepGoing() {
            _ = ev_run(loop, Int32(EVRUN_ONCE))
        }
        tandem_tick_stop(tick)
    }

    /// Frees the loop; after `lws_context_destroy`, which stopped every watcher lws had on it.
    func destroy() {
        _ = ev_run(loop, Int32(EVRUN_NOWAIT))
        ev_loop_destroy(loop)
    }
}
