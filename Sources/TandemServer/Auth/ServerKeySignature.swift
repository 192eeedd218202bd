import Foundation
import TandemCore
import TandemCrypto
import TandemHTTP
import TandemStore

/// Server-to-server key authentication, as CloudKit Web Services documents it ("Accessing
/// CloudKit Using a Server-to-Server Key"; decisions J7, J8).
///
/// A request carries three headers: `X-Apple-CloudKit-Request-KeyID` (a key registered with
/// `tandem key add`), `X-Apple-CloudKit-Request-ISO8601Date` (e.g. `2026-01-25T22:15:43Z`) and
/// `X-Apple-CloudKit-Request-SignatureV1`: base64 of the DER ECDSA P-256 / SHA-256 signature of
///
///     date + ":" + base64(SHA-256(body)) + ":" + subpath
///
/// where the body is the exact bytes sent (none for a GET) and the subpath is the URL path from
/// `/database/1/...`. CloudKit JS in node appends `?` and its query parameters, unencoded, to the
/// subpath it signs, so the path alone, the path with the query as received, and the path with
/// the percent-decoded query are each accepted.
///
/// Rules: the date is within 10 minutes of the server's clock; the key is known, not revoked and
/// registered for the addressed container; as at Apple, only the public database is served and
/// the request acts as the key's user. Any of the three headers present makes the request a
/// signed one: a partial, unknown, revoked, stale or wrongly signed one is refused with
/// `AUTHENTICATION_FAILED` (401) and a reason, never treated as unsigned.
enum ServerKeySignature {
    static let keyIDHeader = "x-apple-cloudkit-request-keyid"
    static let dateHeader = "x-apple-cloudkit-request-iso8601date"
    static let signatureHeader = "x-apple-cloudkit-request-signaturev1"
    /// How far the signed date may be from the server's clock (CloudKit: 10 minutes).
    static let allowedSkewSeconds: Double = 600

    /// The three headers of a signed request.
    struct Headers {
        var keyID: String
        var date: String
        var signature: String
    }

    /// Whether the request carries any of the three headers.
    static func isSigned(_ head: HTTPRequestHead) -> Bool {
        head.headers[keyIDHeader] != nil || head.headers[dateHeader] != nil || head.headers[signatureHeader] != nil
    }

    /// The headers of a signed request, nil for an unsigned one.
    /// - Throws: `AUTHENTICATION_FAILED` when only some of the three are present or one is empty.
    static func headers(_ head: HTTPRequestHead) throws -> Headers? {
        guard isSigned(head) else { return nil }
        let keyID = head.headers[keyIDHeader] ?? "", date = head.headers[dateHeader] ?? "", signature = head.headers[signatureHeader] ?? ""
        let missing = [("X-Apple-CloudKit-Request-KeyID", keyID), ("X-Apple-CloudKit-Request-ISO8601Date", date),
                       ("X-Apple-CloudKit-Request-SignatureV1", signature)].filter { $0.1.isEmpty }.map(\.0)
        guard missing.isEmpty else {
            throw failed("a server-to-server request needs all three headers; missing or empty: \(missing.joined(separator: ", "))")
        }
        return Headers(keyID: keyID, date: date, signature: signature)
    }

    /// Everything that can be checked from the head alone: the headers, the date, the key (known,
    /// not revoked, of `container`) and the database. Returns the key.
    /// - Throws: `AUTHENTICATION_FAILED` with the reason.
    static func admit(_ headers: Headers, container: String, database: DatabaseType?, store: any Store,
                      now: Date = Date()) throws -> StoredServerKey {
        guard let signed = date(headers.date) else {
            throw failed("X-Apple-CloudKit-Request-ISO8601Date must be an ISO 8601 date such as 2026-01-25T22:15:43Z, not '\(headers.date)'")
        }
        let skew = now.timeIntervalSince(signed)
        guard abs(skew) <= allowedSkewSeconds else {
            throw failed("the signed date \(headers.date) is \(Int(abs(skew))) seconds \(skew > 0 ? "old" : "ahead"); it must be within 10 minutes of the server's clock")
        }
        guard let key = try store.read({ try $0.serverKey(id: headers.keyID) }), key.container == container else {
            throw failed("no server-to-server key '\(headers.keyID)' in container '\(container)' (add one with: tandem key add)")
        }
        guard key.revokedAt == nil else { throw failed("server-to-server key '\(headers.keyID)' was revoked") }
        guard database == .public else {
            throw failed("server-to-server keys work in the public database only, not the \(database?.rawValue ?? "addressed") database")
        }
        return key
    }

    /// The user a signed request acts as, once its body is read: `admit` again, then the signature.
    /// - Throws: `AUTHENTICATION_FAILED` with the reason.
    static func user(_ headers: Headers, request: HTTPRequest, container: String, database: DatabaseType,
                     store: any Store) throws -> UserAccount {
        let key = try admit(headers, container: container, database: database, store: store)
        guard let signature = Data(base64Encoded: headers.signature).map({ [UInt8]($0) }), !signature.isEmpty else {
            throw failed("X-Apple-CloudKit-Request-SignatureV1 is not base64")
        }
        let bodyHash = Data(Digest.sha256(request.body)).base64EncodedString()
        let verified = try subpaths(request.head).contains { subpath in
            let message = Array("\(headers.date):\(bodyHash):\(subpath)".utf8)
            return try P256.isValidSignature(signature, of: message, publicKey: key.publicKey)
        }
        guard verified else {
            throw failed("the signature does not match: sign date:base64(sha256(body)):path with the key's private key (ECDSA P-256, SHA-256, DER, base64)")
        }
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key.userRecordName) }) else {
            throw failed("the user of server-to-server key '\(headers.keyID)' no longer exists")
        }
        return user
    }

    /// The subpaths a client may have signed: the path alone, with the query as received, and
    /// with the query percent-decoded (each for the path as received and percent-decoded).
    static func subpaths(_ head: HTTPRequestHead) -> [String] {
        var paths = [head.path]
        if let decoded = head.path.removingPercentEncoding, decoded != head.path { paths.append(decoded) }
        var queries: [String] = []
        if !head.query.isEmpty {
            queries.append(head.query)
            let decoded = head.query.split(separator: "&").map { pair in
                pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    .map { String($0).removingPercentEncoding ?? String($0) }.joined(separator: "=")
            }.joined(separator: "&")
            if decoded != head.query { queries.append(decoded) }
        }
        return paths.flatMap { path in [path] + queries.map { path + "?" + $0 } }
    }

    /// An ISO 8601 date with or without fractional seconds.
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// Container and database of a `/database/1/{container}/{environment}/{database}/...` path;
    /// the database is nil for other paths (`/device/1/`, `/tandem/1/`).
    static func scope(of path: String) -> (container: String, database: DatabaseType?)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard segments.count >= 4 else { return nil }
        let container = segments[3]
        guard segments[1] == "database", segments.count >= 6 else { return (container, nil) }
        return (container, DatabaseType(rawValue: segments[5]))
    }

    static func failed(_ reason: String) -> CloudKitError { CloudKitError(.authenticationFailed, reason) }
}
