import TandemCore

/// What Tandem needs to know about a PostgreSQL connection URL without parsing it (libpq does
/// that, decisions P10): whether a string is one, its scheme in the spelling libpq accepts,
/// and the URL as it may be shown (no password).
///
/// ```swift
/// PostgresURL.isPostgres("PostgreSQL://db/tandem")                  // true
/// PostgresURL.normalized("POSTGRES://tandem@db/tandem")              // "postgres://tandem@db/tandem"
/// PostgresURL.redacted("postgres://tandem:s3cret@db/tandem")         // "postgres://tandem@db/tandem"
/// ```
///
/// Source of the rules: RFC 3986 §3.1 (schemes are case-insensitive) and PostgreSQL 15,
/// libpq "Connection URIs" (`postgresql://[userspec@][hostspec][/dbname][?paramspec]`, where
/// libpq itself compares the scheme case-sensitively).
public enum PostgresURL {
    private static let schemes = ["postgres://", "postgresql://"]

    /// Whether `text` starts with `postgres://` or `postgresql://`, in any letter case.
    public static func isPostgres(_ text: String) -> Bool {
        scheme(of: text) != nil
    }

    /// `text` with its scheme in lower case (libpq takes `POSTGRES://…` for a `key=value`
    /// string and fails on it); anything else as it is.
    public static func normalized(_ text: String) -> String {
        guard let scheme = scheme(of: text) else { return text }
        return scheme + text.dropFirst(scheme.count)
    }

    /// The URL without its password, for start lines, hints and markers: the `:password` of the
    /// user part and any `password=` parameter are left out
    /// (`postgres://tandem:pw@db:5433/tandem?password=pw&sslmode=require` →
    /// `postgres://tandem@db:5433/tandem?sslmode=require`); the user part is cut by
    /// `RedactedURL.userPart`, the one redaction for connection URLs.
    public static func redacted(_ text: String) -> String {
        let url = normalized(text)
        guard scheme(of: url) != nil else { return url }
        var rest = Substring(url)
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var shown = RedactedURL.userPart(String(rest))
        if let query {
            let kept = query.split(separator: "&", omittingEmptySubsequences: false)
                .filter { !$0.lowercased().hasPrefix("password=") }
            if !kept.isEmpty { shown += "?" + kept.joined(separator: "&") }
        }
        return shown
    }

    /// The scheme `text` starts with, in lower case; nil when it is not a PostgreSQL URL.
    private static func scheme(of text: String) -> String? {
        let head = text.prefix(schemes[1].count).lowercased()
        return schemes.first { head.hasPrefix($0) }
    }
}
