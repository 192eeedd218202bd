import TandemCore
import TandemHTTP

/// Brute-force limits on sign-in and sign-up (decisions A5): failed sign-ins per account and per
/// client address, and sign-ups per address, each in a sliding window. An exhausted limit is
/// `THROTTLED` (HTTP 429) with `retryAfter`: the seconds until the oldest counted attempt leaves
/// the window. Limits are checked before a credential is, so a locked account does not tell a
/// right password from a wrong one; unknown accounts are counted like known ones.
///
/// In memory: a restart forgets. With `connect(to:)`, every node counts every node's attempts
/// (through the bus, N64), so several nodes allow what one would, within the bus's delay.
final class SignInLimiter: Sendable {
    struct Limits: Sendable {
        /// Failed sign-ins per account in the window.
        var perAccount = 5
        /// Failed sign-ins per client address in the window (over all accounts).
        var perAddress = 50
        /// Sign-up requests per client address in the window.
        var signUpsPerAddress = 20
        var windowMilliseconds: Int64 = 15 * 60 * 1000
    }

    let limits: Limits
    /// Attempt times (ms) by key: `a:` account, `i:` address failures, `s:` address sign-ups.
    private let attempts = Locked<[String: [Int64]]>([:])
    /// Where this node's attempts go to the other nodes, once connected.
    private let bus = Locked<EventBus?>(nil)

    init(limits: Limits) { self.limits = limits }

    /// Tells the other nodes of this node's attempts, and counts theirs (N64).
    func connect(to bus: EventBus) {
        self.bus.withLock { $0 = bus }
        bus.subscribe { [weak self] delivery in
            guard let self, case .event(let event) = delivery, event.origin != bus.node,
                  case .attempts(let traffic) = event.body, traffic.limit == AttemptTraffic.signIn else { return }
            if traffic.clears { clear(traffic.keys) } else if traffic.withdraws { uncount(traffic.keys, at: traffic.at) } else { count(traffic.keys, at: traffic.at) }
        }
    }

    /// Counts a sign-in attempt as failed before its credential is checked, in one step with the
    /// check, so attempts arriving together cannot all pass it while the first is still being
    /// verified (an Argon2 hash takes long enough for dozens to arrive, N64). The caller then
    /// calls `succeeded` or `uncounted` for an attempt that turns out not to be a failure.
    /// - Throws: `THROTTLED` when the account or the address has no attempts left.
    func admitSignIn(account: String, address: String, at now: Int64) throws {
        let keys = ["a:" + account, "i:" + IPAddress.limitKey(address)]
        try check([keys[0]: limits.perAccount, keys[1]: limits.perAddress], at: now, counting: true)
        publish(AttemptTraffic(limit: AttemptTraffic.signIn, keys: keys, at: now))
    }

    /// The attempt admitted at `at` proved the account: its failures are cleared, and the
    /// address's count forgets this attempt (a correct sign-in is not a failure).
    func succeeded(account: String, address: String, at: Int64) {
        clear(["a:" + account])
        publish(AttemptTraffic(limit: AttemptTraffic.signIn, keys: ["a:" + account], clears: true, at: 0))
        uncounted(keys: ["i:" + IPAddress.limitKey(address)], at: at)
    }

    /// The attempt admitted at `at` could not be checked (the store failed): it does not count.
    func uncounted(account: String, address: String, at: Int64) {
        uncounted(keys: ["a:" + account, "i:" + IPAddress.limitKey(address)], at: at)
    }

    private func uncounted(keys: [String], at: Int64) {
        uncount(keys, at: at)
        publish(AttemptTraffic(limit: AttemptTraffic.signIn, keys: keys, withdraws: true, at: at))
    }

    private func uncount(_ keys: [String], at: Int64) {
        attempts.withLock { table in
            for key in keys {
                guard let index = table[key]?.lastIndex(of: at) else { continue }
                table[key]!.remove(at: index)
                if table[key]!.isEmpty { table[key] = nil }
            }
        }
    }

    private func clear(_ keys: [String]) {
        attempts.withLock { table in for key in keys { table.removeValue(forKey: key) } }
    }

    private func publish(_ traffic: AttemptTraffic) {
        bus.withLock { $0 }?.publish(.attempts(traffic))
    }

    /// Counts a sign-up from `address`.
    /// - Throws: `THROTTLED` when the address made too many.
    func signUp(address: String, at now: Int64) throws {
        let key = "s:" + IPAddress.limitKey(address)
        try check([key: limits.signUpsPerAddress], at: now, counting: true)
        publish(AttemptTraffic(limit: AttemptTraffic.signIn, keys: [key], at: now))
    }

    /// Throws `THROTTLED` when any of `keys` has its limit's attempts in the window; otherwise,
    /// when `counting`, counts one attempt for each, in the same step.
    private func check(_ keys: [String: Int], at now: Int64, counting: Bool) throws {
        let horizon = now - limits.windowMilliseconds
        let wait: Int64? = attempts.withLock { table in
            var longest: Int64?
            for (key, limit) in keys {
                let recent = (table[key] ?? []).filter { $0 > horizon }
                table[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first {
                    longest = max(longest ?? 0, oldest + limits.windowMilliseconds - now)
                }
            }
            if longest == nil && counting { Self.count(keys.keys, at: now, horizon: horizon, in: &table) }
            return longest
        }
        if let wait {
            var error = CloudKitError(.throttled, "too many attempts; retry later")
            error.retryAfter = Int(max(1, (wait + 999) / 1000))
            throw error
        }
    }

    private func count(_ keys: [String], at now: Int64) {
        let horizon = now - limits.windowMilliseconds
        attempts.withLock { table in Self.count(keys, at: now, horizon: horizon, in: &table) }
    }

    private static func count(_ keys: some Sequence<String>, at now: Int64, horizon: Int64, in table: inout [String: [Int64]]) {
        // Bounded: past 50,000 keys, keys with nothing in the window are dropped.
        if table.count > 50_000 { table = table.filter { $0.value.last.map { $0 > horizon } ?? false } }
        for key in keys { table[key, default: []].append(now) }
    }
}
