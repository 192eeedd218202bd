import TandemCore
import TandemStore

/// One `TokenBucket` per key (a person's user record name), made full on first use: the limit on
/// activity invitation lookups (decisions R39). An exhausted bucket is `THROTTLED` (HTTP 429)
/// with `retryAfter`, the whole seconds until it holds a token again, as the other rate limits.
///
/// In memory, per process, like `SignInLimiter`: a restart forgets, and each node counts its own.
final class TokenBuckets: Sendable {
    /// Tokens added per second.
    let rate: Double
    /// Uses a key may make at once.
    let burst: Double
    /// The `reason` of the `THROTTLED` error.
    let reason: String
    private let buckets = Locked<[String: TokenBucket]>([:])
    /// The limit's name among ``AttemptTraffic``'s and the bus, once connected (N64).
    private let shared = Locked<(limit: String, bus: EventBus)?>(nil)
    /// Past this many keys, the full buckets (no different from new ones) are dropped.
    static let keptKeys = 50_000

    init(rate: Double, burst: Double, reason: String) {
        self.rate = rate
        self.burst = burst
        self.reason = reason
    }

    /// Takes one token of `key`'s bucket.
    /// - Throws: `THROTTLED` with `retryAfter` (seconds, at least 1) when it has none.
    func take(_ key: String) throws {
        let wait: Double? = buckets.withLock { table in
            if table.count > Self.keptKeys {
                table = table.filter { _, bucket in var bucket = bucket; return !bucket.isFull() }
            }
            var bucket = table[key] ?? TokenBucket(rate: rate, burst: burst)
            defer { table[key] = bucket }
            return bucket.take() ? nil : bucket.secondsUntilNextToken()
        }
        if let wait {
            var error = CloudKitError(.throttled, reason)
            error.retryAfter = max(1, Int(wait.rounded(.up)))
            throw error
        }
    }

    /// Gives back the token taken for `key` by a use that does not count.
    func giveBack(_ key: String) {
        buckets.withLock { $0[key]?.giveBack() }
    }

    /// Tells the other nodes of the uses this node counted (`counted(_:)`) under `limit`, and
    /// takes a token for each of theirs, so the limit holds for the cluster (N64).
    func connect(to bus: EventBus, limit: String) {
        shared.withLock { $0 = (limit, bus) }
        bus.subscribe { [weak self] delivery in
            guard let self, case .event(let event) = delivery, event.origin != bus.node,
                  case .attempts(let traffic) = event.body, traffic.limit == limit else { return }
            buckets.withLock { table in
                for key in traffic.keys {
                    var bucket = table[key] ?? TokenBucket(rate: rate, burst: burst)
                    _ = bucket.take()
                    table[key] = bucket
                }
            }
        }
    }

    /// A use of `key` that counts (its token is kept): the other nodes take one too.
    func counted(_ key: String) {
        guard let (limit, bus) = shared.withLock({ $0 }) else { return }
        bus.publish(.attempts(AttemptTraffic(limit: limit, keys: [key], at: Clock.milliseconds())))
    }
}
