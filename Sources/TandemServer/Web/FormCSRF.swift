import Foundation
import TandemHTTP
import TandemCore
import TandemCrypto
import TandemStore

/// The CSRF check of the server's HTML forms (decisions A9, C4): a random 256-bit cookie
/// (`tandem_csrf`, `HttpOnly; SameSite=Strict`, `Secure` over https, scoped to the pages' `path`)
/// and, in every form, the field `csrf` = HMAC-SHA256(server secret, "csrf|" + cookie) in hex,
/// compared in constant time. The sign-in pages use it at `/signin`, the console at `/console`.
struct FormCSRF: Sendable {
    static let cookieName = "tandem_csrf"
    let secret: [UInt8]
    /// The cookie's `Path`.
    let path: String

    /// The request's CSRF cookie, or a new one with its Set-Cookie header.
    func cookie(_ context: RequestContext) -> (value: String, setCookie: String?) {
        if let value = Self.cookies(context.request.head.headers["cookie"])[Self.cookieName], value.count == 43 { return (value, nil) }
        let value = Tokens.random(prefix: "")
        let secure = context.baseURL.hasPrefix("https://") ? "; Secure" : ""
        return (value, "\(Self.cookieName)=\(value); Path=\(path); HttpOnly; SameSite=Strict\(secure)")
    }

    /// The form field that goes with `cookie`; with `session` (the console session's hash), one
    /// that fits that session only (decisions C63).
    func token(_ cookie: String, session: [UInt8]? = nil) -> String {
        let bound = session.map { "|" + Digest.hex($0) } ?? ""
        return Digest.hex(Digest.hmacSHA256(key: secret, message: Array(("csrf|" + cookie + bound).utf8)))
    }

    /// The form's field when it matches the request's cookie (and `session`, when given); nil
    /// otherwise (no cookie, no field, a mismatch), and for a request the browser says another
    /// site sent (`Sec-Fetch-Site: cross-site` or `same-site`; every form of these pages posts
    /// to its own origin, C63).
    func check(_ context: RequestContext, _ fields: [String: String], session: [UInt8]? = nil) -> String? {
        if let site = context.request.head.headers["sec-fetch-site"]?.lowercased(), site == "cross-site" || site == "same-site" { return nil }
        guard let cookie = Self.cookies(context.request.head.headers["cookie"])[Self.cookieName], let sent = fields["csrf"] else { return nil }
        let expected = token(cookie, session: session)
        return Digest.equal(Array(sent.utf8), Array(expected.utf8)) ? expected : nil
    }

    /// A `Cookie` header's pairs.
    static func cookies(_ header: String?) -> [String: String] {
        var result: [String: String] = [:]
        for part in (header ?? "").split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            result[String(pair[0].trimmingCharacters(in: .whitespaces))] = String(pair[1].trimmingCharacters(in: .whitespaces))
        }
        return result
    }
}
