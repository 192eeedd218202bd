/// Sign-in settings of `tandem serve` (decisions A3–A6).
public struct AccountSettings: Sendable {
    /// Argon2id cost, `m=KiB,t=passes,p=lanes` (default `m=19456,t=2,p=1`). Hashes made with other
    /// parameters are replaced at their next successful sign-in.
    public var passwordHash = "m=19456,t=2,p=1"
    /// A web auth token stops working this long after its last use (default 14 days).
    public var sessionIdleSeconds: Int64 = 14 * 86_400
    /// ... and this long after it was issued, used or not (default 90 days).
    public var sessionLifetimeSeconds: Int64 = 90 * 86_400
    /// Failed sign-ins per account, per client address, and sign-ups per address, in `attemptWindowSeconds`.
    public var attemptsPerAccount = 5
    public var attemptsPerAddress = 50
    public var signUpsPerAddress = 20
    public var attemptWindowSeconds: Int64 = 900
    /// How long an emailed sign-up or reset link works (`--link-lifetime`, default 24 hours; A46).
    public var linkLifetimeSeconds: Int64 = 86_400

    /// The SMTP server for sign-up and reset emails (`smtp://host:587`, `smtps://host:465`); nil
    /// sends nothing (the server says so once).
    public var smtpURL: String?
    /// The sender address of account emails.
    public var smtpFrom = "noreply@localhost"
    public var smtpUsername: String?
    public var smtpPassword: String?
    /// The operator's wording of the emails (`--mail-templates DIR`; A32); empty keeps the built-in text.
    public var mailTemplates = MailTemplates()

    /// OpenID Connect: token exchange issuers and sign-in page providers, per container.
    public var oidc = OIDCSettings()
    /// The passkey RP ID (`--passkey-rp-id`): the server's host or a parent domain of it; nil uses
    /// the host of `--public-url` (or of each request's Host header).
    public var passkeyRPID: String?
    /// Whether passkeys must verify the user (PIN or biometrics: the UV flag); `false` accepts
    /// presence alone (`--passkey-user-verification required|preferred`, default required).
    public var passkeyUserVerification = true

    public init() {}

    /// Whether `text` is valid for `passwordHash`.
    public static func isValidPasswordHash(_ text: String) -> Bool { Argon2id.Parameters(text) != nil }

    /// One Argon2id hash of `password` with `parameters`, as sign-up makes it (PHC string); nil
    /// when `parameters` are not valid. For `tandem-bench`'s hash time (A3).
    /// - Throws: when libargon2 refuses (out of memory).
    public static func hashPassword(_ password: String, parameters: String) throws -> String? {
        guard let parsed = Argon2id.Parameters(parameters) else { return nil }
        return try Argon2id(parameters: parsed, concurrentHashes: 1).hash(password)
    }
}
