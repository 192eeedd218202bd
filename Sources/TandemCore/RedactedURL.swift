/// A connection URL as it may be shown in start lines, logs and errors: without the secret of
/// its user part (`scheme://user:password@host…` → `scheme://user@host…`). The one redaction
/// behind `PostgresURL.redacted` (the store, decisions P10) and the bus's URLs (decisions N29).
///
/// ```swift
/// RedactedURL.userPart("nats://tandem:s3cret@h:4222")            // "nats://tandem@h:4222"
/// RedactedURL.userPart("nats://s3cret@h:4222", aloneIsSecret: true) // "nats://REDACTED@h:4222"
/// ```
///
/// Source of the rule: RFC 3986 §3.2.1 (`userinfo = user [":" password]`, ending at the `@`
/// before the authority's end, the first `/`, `?` or `#`). The URL is not parsed further or
/// validated: the library that connects does that.
public enum RedactedURL {
    /// `url` without the `:password` of its user part. `aloneIsSecret`: a user part with no
    /// `:` is a secret itself (NATS takes `nats://TOKEN@host` as a token) and is shown as
    /// `REDACTED`. `untilLastAt`: the user part runs to the last `@` of the whole text, as
    /// libnats reads it (a NATS password may hold `/`, `?`, `#` or `@` unescaped, N61), not to the
    /// authority's end. A text with no `://` is returned as it is.
    public static func userPart(_ url: String, aloneIsSecret: Bool = false, untilLastAt: Bool = false) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = untilLastAt ? rest.endIndex : rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        let head = url[..<schemeEnd.upperBound]
        if let colon = rest[..<at].firstIndex(of: ":") {
            return String(head + rest[..<colon] + rest[at...])
        }
        return aloneIsSecret ? String(head + "REDACTED" + rest[at...]) : url
    }
}
