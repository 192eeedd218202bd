import Foundation
import Glibc
import TandemCore
import TandemHTTP

/// A download answered from a stored file (record assets, journal attachments, session preview
/// images): the HTTP layer reads the file as the client takes it (`HTTPFileBody`), so a
/// download holds one 256 KiB chunk in memory rather than the whole file, and a range reads
/// only its bytes (decisions E44).
enum FileDownload {
    /// Whether an `if-none-match` header names `etag` (or is `*`), by the weak comparison
    /// RFC 9110 §13.1.2 asks for (a `W/` prefix is ignored).
    static func matches(ifNoneMatch header: String?, etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { entry in
            let tag = entry.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }

    /// 200 with the file at `path`; with a `range` header (`rangeHeader`, RFC 9110 §14, see
    /// `ByteRange`) 206 with that part, or 416 with `content-range: bytes */SIZE` when it lies
    /// outside the file. `nil` when there is no such file.
    ///
    /// - Throws: `CloudKitError` 503 `TRY_AGAIN_LATER` (retry after 2 s) when the file cannot
    ///   be looked at for another reason than its absence (say, the server is out of memory
    ///   for the kernel's file tables): it is there, and a 404 would tell the client it is gone.
    static func response(path: String, headers: [(String, String)], rangeHeader: String?, uuid: String) throws -> HTTPResponse? {
        guard let size = HTTPFileBody.size(path: path) else {
            let code = errno
            guard code == ENOENT || code == ENOTDIR else {
                var error = CloudKitError(.tryAgainLater, "the file cannot be read just now (\(String(cString: strerror(code)))); try again")
                error.retryAfter = 2
                throw error
            }
            return nil
        }
        var headers = headers
        switch ByteRange.parse(rangeHeader, size: size) {
        case .whole:
            return HTTPResponse(status: 200, headers: headers, file: HTTPFileBody(path: path, range: 0..<size))
        case .part(let range):
            headers.append(("content-range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"))
            return HTTPResponse(status: 206, headers: headers, file: HTTPFileBody(path: path, range: range))
        case .unsatisfiable:
            headers.append(("content-range", "bytes */\(size)"))
            var response = Responses.error(CloudKitError.badRequest("the requested range is outside the asset's \(size) bytes"),
                                           uuid: uuid, status: 416)
            response.headers += headers.filter { $0.0 != "content-type" }
            return response
        }
    }
}
