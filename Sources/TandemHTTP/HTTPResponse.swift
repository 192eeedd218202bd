/// A response to write back: status, headers and the whole body.
///
/// The server always writes `content-length` itself (a `content-length` or
/// `transfer-encoding` header given here is ignored) and decides `connection`; a
/// `connection: close` header given here makes the server close the connection after this
/// response. Header names or values containing CR, LF or NUL are dropped. Bodies of any size
/// are written in chunks, so a large asset (tens of MiB) does not block other connections; a
/// body in a file (`file`) is read as it is written, not held whole.
public struct HTTPResponse: Sendable {
    /// The status code, 100...999; anything else is written as 500.
    public var status: Int
    /// Extra headers, e.g. `("content-type", "application/json")`, written in order.
    public var headers: [(String, String)]
    /// The body bytes. Not written for `HEAD` requests and for 1xx, 204 and 304 statuses.
    public var body: [UInt8]
    /// A body sent from a file instead of `body` (which is then ignored).
    public var file: HTTPFileBody?

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `file`'s range.
    public init(status: Int = 200, headers: [(String, String)] = [], file: HTTPFileBody) {
        self.init(status: status, headers: headers)
        self.file = file
    }

    /// The body's length in bytes: `file`'s range, or `body`'s.
    public var bodyLength: Int { file?.range.count ?? body.count }
}
