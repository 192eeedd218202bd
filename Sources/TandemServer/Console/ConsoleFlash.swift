import TandemCore
import TandemStore

/// A secret a console POST made, held in memory for the page its redirect leads to (decisions
/// C52): creating an API token answers `303` to the container page, which shows the secret
/// once. The secret is bound to the console session that made it and to its container, never put
/// in a URL, taken (removed) by the first page that shows it, and dropped after 5 minutes or a
/// restart. At most 1,000 are held; a new one pushes out the oldest.
final class ConsoleFlash: Sendable {
    static let lifetimeMilliseconds: Int64 = 5 * 60 * 1000
    static let capacity = 1000

    private struct Entry {
        var session: [UInt8]
        var container: String
        var secret: String
        var expiresAt: Int64
    }

    private let entries = Locked<[Entry]>([])

    /// Holds `secret` for the session with token hash `session`; replaces what it held before.
    func put(session: [UInt8], container: String, secret: String, now: Int64 = Clock.milliseconds()) {
        entries.withLock { entries in
            entries.removeAll { $0.expiresAt <= now || $0.session == session }
            if entries.count >= Self.capacity { entries.removeFirst(entries.count - Self.capacity + 1) }
            entries.append(Entry(session: session, container: container, secret: secret, expiresAt: now + Self.lifetimeMilliseconds))
        }
    }

    /// The secret the session's last POST left for `container`, once; nil when there is none,
    /// it expired or it was shown already.
    func take(session: [UInt8], container: String, now: Int64 = Clock.milliseconds()) -> String? {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.session == session && $0.container == container }) else { return nil }
            let entry = entries.remove(at: index)
            return entry.expiresAt > now ? entry.secret : nil
        }
    }
}
