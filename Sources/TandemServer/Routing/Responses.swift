public import TandemCore
public import TandemHTTP

/// Builds HTTP responses: JSON bodies and CloudKit-style error bodies.
public enum Responses {
    static let jsonHeaders = [("content-type", "application/json; charset=utf-8")]

    /// A JSON body that ends with a newline, so an answer printed by `curl` in a terminal
    /// ends its line (decision F5; JSON parsers ignore the trailing whitespace).
    public static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: JSONWriter.bytes(value) + [0x0A])
    }

    /// A whole-request error: `{uuid, serverErrorCode, reason, ...}` with the code's HTTP status
    /// (or `status` when the HTTP layer needs a more precise one, e.g. 404, 405, 413, 415).
    /// A CloudKit error body; an error with `retryAfter` also carries the `Retry-After` header.
    public static func error(_ error: CloudKitError, uuid: String, status: Int? = nil) -> HTTPResponse {
        var response = json(ErrorCodec.encode(error, uuid: uuid), status: status ?? error.code.httpStatus)
        if let retryAfter = error.retryAfter { response.headers.append(("retry-after", String(retryAfter))) }
        return response
    }
}
