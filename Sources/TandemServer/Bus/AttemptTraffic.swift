/// What one node's brute-force limit counted, for every other node to count as well (N64):
/// sign-in failures and sign-ups (`SignInLimiter`), activity-invitation guesses (`TokenBuckets`).
/// Without it each node kept its own count, and N nodes let an attacker try N times as often.
/// The keys name accounts and client addresses: they travel only on the bus, which is private
/// to the nodes and signed (N28).
struct AttemptTraffic: Codable, Sendable, Equatable {
    /// Which limit: ``signIn`` or ``invitationLookups``.
    var limit: String
    /// The limit's own keys (`SignInLimiter`: `a:ACCOUNT`, `i:ADDRESS`, `s:ADDRESS`; invitation
    /// lookups: the user record name).
    var keys: [String]
    /// True when the keys' counts are cleared (a correct password), else one attempt each.
    var clears = false
    /// True when the attempt counted at `at` is taken back (it turned out right), N64.
    var withdraws = false
    /// When, in milliseconds since 1970 (the limits' clock, `Clock.milliseconds()`).
    var at: Int64

    static let signIn = "signIn"
    static let invitationLookups = "invitationLookups"
}
