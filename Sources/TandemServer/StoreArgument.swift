/// How an admin command names the server's store with `--store` (decisions P36, P57): what
/// the first-run hint prints so that the commands it suggests reach the same store.
public enum StoreArgument: Sendable, Equatable {
    /// A PostgreSQL URL with its password left out (`PostgresURL.redacted`): the commands
    /// take the password from `~/.pgpass` or `PGPASSWORD`.
    case postgres(String)
    /// A directory holding `tandem.sqlite` apart from the data directory.
    case directory(String)

    /// The value as it follows `--store`.
    public var value: String {
        switch self {
        case .postgres(let url), .directory(let url): url
        }
    }

    /// ``value`` as one shell word, quoted when it needs it (a URL's `?` and `&`; F46's rule).
    public var shellWord: String { FirstRunHint.shellWord(value) }
}
