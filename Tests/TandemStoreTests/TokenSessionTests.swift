import Testing
import TandemStore

/// When a user token stops working and when it is rotated (decisions A6, A12, A13): a table of
/// sessions at a moment, each with the refusal kind expected (nil: it works) and whether it is due
/// for rotation. Times are milliseconds; every session was issued at 0 with a 10-second idle limit.
@Suite struct TokenSessionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var session: TokenSession
        var now: Int64
        var refusal: SessionRefusal.Kind?
        var rotates: Bool
        var testDescription: String { name }
    }

    static func session(lastUsedAt: Int64? = nil, expiresAt: Int64 = 100_000, revokedAt: Int64? = nil, rotatedAt: Int64? = nil) -> TokenSession {
        TokenSession(lastUsedAt: lastUsedAt, expiresAt: expiresAt, idleMilliseconds: 10_000, revokedAt: revokedAt, createdAt: 0, rotatedAt: rotatedAt)
    }

    static let cases: [Case] = [
        Case(name: "fresh", session: session(), now: 1_000, refusal: nil, rotates: false),
        Case(name: "just under half the idle limit", session: session(lastUsedAt: 4_000), now: 4_999, refusal: nil, rotates: false),
        Case(name: "half the idle limit since issue", session: session(lastUsedAt: 4_000), now: 5_000, refusal: nil, rotates: true),
        Case(name: "idle too long", session: session(lastUsedAt: 1_000), now: 11_000, refusal: .expired, rotates: false),
        Case(name: "never used, idle too long", session: session(), now: 10_000, refusal: .expired, rotates: false),
        Case(name: "absolute limit", session: session(lastUsedAt: 99_000, expiresAt: 100_000), now: 100_000, refusal: .expired, rotates: false),
        Case(name: "revoked", session: session(lastUsedAt: 1_000, revokedAt: 1_500), now: 2_000, refusal: .revoked, rotates: false),
        Case(name: "revoked and expired says revoked", session: session(revokedAt: 1_500), now: 200_000, refusal: .revoked, rotates: false),
        Case(name: "rotated, in its grace", session: session(lastUsedAt: 6_000, rotatedAt: 6_000), now: 6_000 + 9_000,
             refusal: nil, rotates: false),
        Case(name: "rotated, grace over", session: session(lastUsedAt: 60_000, expiresAt: 200_000, rotatedAt: 6_000),
             now: 6_000 + TokenSession.rotationGraceMilliseconds, refusal: .expired, rotates: false),
    ]

    @Test(arguments: cases)
    func refusalAndRotationFollowTheLimits(_ c: Case) {
        #expect(c.session.refusal(at: c.now)?.kind == c.refusal)
        #expect(c.session.wantsRotation(at: c.now) == c.rotates)
    }

    @Test func tokensWithoutAnIdleLimitNeverRotate() {
        let cli = TokenSession(createdAt: 0)
        #expect(cli.refusal(at: 1 << 40) == nil)
        #expect(!cli.wantsRotation(at: 1 << 40))
    }
}
