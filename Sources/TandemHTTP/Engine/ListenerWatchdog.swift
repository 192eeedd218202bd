import Foundation
import TandemCore

/// Checks every `interval` seconds, on a thread of its own, that the server's listening
/// socket is still there: the descriptor open, naming the socket bound at start, and listening.
///
/// libwebsockets keeps polling the descriptor number it bound. Should the socket be closed
/// behind its back (a stray `close` elsewhere in the process, a descriptor closed twice), the
/// number is either invalid, so `poll` reports it at once on every pass, or names whatever
/// was opened next; lws 4.1.6 then calls `accept` on it in a loop. Either way the server
/// spins at 100% CPU accepting nothing, without a word. The watchdog turns that into one log
/// line and a stop (`onLoss`), so a supervisor can restart the process.
final class ListenerWatchdog: Sendable {
    private enum Outcome {
        case fine, disarmed, lost(String)
    }

    private let socket: ListeningSocket
    private let interval: Double
    private let onLoss: @Sendable (String) -> Void
    private let armed = Locked(true)
    private let stopped = StopSignal()

    init(socket: ListeningSocket, interval: Double, onLoss: @escaping @Sendable (String) -> Void) {
        self.socket = socket
        self.interval = interval
        self.onLoss = onLoss
    }

    func start() {
        let thread = Thread { [self] in watch() }
        thread.name = "tandem-http-watchdog"
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Stops checking. Once this returns no check is running or will run, so the socket may
    /// be closed (the service thread calls it before destroying the lws context).
    func disarm() {
        armed.withLock { $0 = false }
        stopped.set()
    }

    private func watch() {
        while !stopped.wait(seconds: interval) {
            let outcome: Outcome = armed.withLock { armed in
                guard armed else { return .disarmed }
                guard let problem = socket.problem() else { return .fine }
                armed = false
                return .lost(problem)
            }
            switch outcome {
            case .fine: continue
            case .disarmed: return
            case .lost(let problem):
                onLoss(problem)
                return
            }
        }
    }
}
