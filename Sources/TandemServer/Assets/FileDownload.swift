import Glibc
import TandemCore
import TandemHTTP

/// A download answered from a stored file (record assets, journal attachments, session preview
/// images): the HTTP layer reads the file as the client takes it (`HTTPFileBody`), so a
/// download holds one 256 KiB chunk in memory rather than the whole file, and a range reads
/// only its bytes (decisions E44).
enum FileDownload {
    /// 200 with the file at `path`; with a `range` header (`rangeHeader`, RFC 9110 §14, see
    /// `ByteRange`) 206 with that part, or 416 with `content-range: bytes */SIZE` when it lies
    /// outside the file. `nil` when there is no such file.
    static func response(path: String, headers: [(String, String)], rangeHeader: String?, uuid: String) -> HTTPResponse? {
        guard let (descriptor, size) = HTTPFileBody.open(path: path) else { return nil }
        var headers = headers
        switch ByteRange.parse(rangeHeader, size: size) {
        case .whole:
            return HTTPResponse(status: 200, headers: headers, file: HTTPFileBody(adopting: descriptor, range: 0..<size))
        case .part(let range):
            headers.append(("content-range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"))
            return HTTPResponse(status: 206, headers: headers, file: HTTPFileBody(adopting: descriptor, range: range))
        case .unsatisfiable:
            close(descriptor)
            headers.append(("content-range", "bytes */\(size)"))
            var response = Responses.error(CloudKitError.badRequest("the requested range is outside the asset's \(size) bytes"),
                                           uuid: uuid, status: 416)
            response.headers += headers.filter { $0.0 != "content-type" }
            return response
        }
    }
}
