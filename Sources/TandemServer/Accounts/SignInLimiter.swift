import TandemCore

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
            if traffic.clears { clear(traffic.keys) } else { count(traffic.keys, at: traffic.at) }
        }
    }

    /// - Throws: `THROTTLED` when the account or the address has no attempts left.
    func checkSignIn(account: String, address: String, at now: Int64) throws {
        try check(["a:" + account: limits.perAccount, "i:" + address: limits.perAddress], at: now)
    }

    func recordFailure(account: String, address: String, at now: Int64) {
        record(["a:" + account, "i:" + address], at: now)
    }

    /// A correct credential clears the account's failures (not the address's).
    func recordSuccess(account: String) {
        clear(["a:" + account])
        publish(AttemptTraffic(limit: AttemptTraffic.signIn, keys: ["a:" + account], clears: true, at: 0))
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
        try check(["s:" + address: limits.signUpsPerAddress], at: now)
        record(["s:" + address], at: now)
    }

    private func check(_ keys: [String: Int], at now: Int64) throws {
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
            return longest
        }
        if let wait {
            var error = CloudKitError(.throttled, "too many attempts; retry later")
            error.retryAfter = Int(max(1, (wait + 999) / 1000))
            throw error
        }
    }

    private func record(_ keys: [String], at now: Int64) {
        count(keys, at: now)
        publish(AttemptTraffic(limit: AttemptTraffic.signIn, keys: keys, at: now))
    }

    private func count(_ keys: [String], at now: Int64) {
        let horizon = now - limits.windowMilliseconds
        attempts.withLock { table in
            // Bounded: past 50,000 keys, keys with nothing in the window are dropped.
            if table.count > 50_000 { table = table.filter { $0.value.last.map { $0 > horizon } ?? false } }
            for key in keys { table[key, default: []].append(now) }
        }
    }
}
