import CWebSockets

/// Copies a parsed request head out of libwebsockets' header table (service thread only).
///
/// libwebsockets parses the head into its own table before `LWS_CALLBACK_HTTP`; the table is
/// reused once the transaction completes, so everything the responder needs is copied into
/// Swift values here, once.
final class RequestHeadReader {
    /// What the head says, before any policy is applied.
    struct Facts {
        var head: HTTPRequestHead
        var contentLength: ContentLength
        var transferEncoding: String?
        var expectsContinue: Bool
        var isHTTP11: Bool
        var keepAlive: Bool
        /// `HTTP/1.0` or `HTTP/1.1`; `false` for any other version on the request line.
        var isSupportedVersion: Bool
        /// The path held a raw `;` or `&` (lws splits it there): refused with 400, since what
        /// lies past the split cannot be read back as it was sent.
        var splitPath: Bool
    }

    enum ContentLength: Equatable {
        case absent
        case value(Int)
        case malformed
    }

    // The per-request loops below touch only these plain buffers (no reference counting);
    // a name string is read only for a header that is present.

    /// Every header lws parses into a fixed slot, and its lower-case name at the same index.
    private let knownTokens: UnsafeMutableBufferPointer<lws_token_indexes>
    private let knownNames: [String]
    /// Headers lws keeps as "unknown": lookup keys `name:` (lower-case, as lws stores them),
    /// back to back in `customKeys`, and the names at the same index.
    private let customKeys: UnsafeMutableBufferPointer<CChar>
    private let customKeyRanges: UnsafeMutableBufferPointer<(offset: Int, length: Int32)>
    private let customNames: [String]
    private let buffer: UnsafeMutablePointer<CChar>
    private let capacity: Int32
    /// Whose `X-Forwarded-For` names the client (`HTTPRequestHead.remoteAddress`).
    private let trustedProxies: TrustedProxies

    init(maxHeaderBytes: Int, customHeaderNames: [String], trustedProxies: TrustedProxies = TrustedProxies()) {
        self.trustedProxies = trustedProxies
        capacity = Int32(maxHeaderBytes + 1)
        buffer = .allocate(capacity: Int(capacity))
        let known = Self.headerTokens()
        knownTokens = .allocate(capacity: known.count)
        _ = knownTokens.initialize(from: known.map(\.token))
        knownNames = known.map(\.name)

        customNames = customHeaderNames.map { $0.lowercased() }
        let keys = customNames.map { Array(($0 + ":").utf8CString.dropLast()) }
        customKeys = .allocate(capacity: max(1, keys.reduce(0) { $0 + $1.count }))
        customKeyRanges = .allocate(capacity: keys.count)
        var offset = 0
        for (index, key) in keys.enumerated() {
            for (position, byte) in key.enumerated() {
                customKeys[offset + position] = byte
            }
            customKeyRanges[index] = (offset: offset, length: Int32(key.count))
            offset += key.count
        }
    }

    deinit {
        buffer.deallocate()
        knownTokens.deallocate()
        customKeys.deallocate()
        customKeyRanges.deallocate()
    }

    /// Reads the head of the request `wsi` is on; `nil` when lws reports no usable method.
    /// `peerAddress` is the TCP peer's; the head's `remoteAddress` is the client's, read from
    /// `X-Forwarded-For` when the peer is a trusted proxy (`TrustedProxies`).
    func read(_ wsi: OpaquePointer, peerAddress: String) -> Facts? {
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let methodIndex = Int(lws_http_get_uri_and_method(wsi, &uri, &uriLength))
        guard let method = Self.methodName(methodIndex), let token = Self.uriToken(methodIndex), uriLength > 0 else { return nil }

        // The path is read fragment by fragment, never as `uri` + `uriLength`: lws splits a
        // path at a raw `;` or `&` into fragments with a byte between them it never writes, and
        // `uriLength` counts them all, so a read of that range from `uri` returned bytes of an
        // earlier request's head (its Authorization header among them; audit of W21). Such a
        // path is refused (`splitPath`); only fragment 0 is ever copied.
        let first = lws_hdr_copy_fragment(wsi, buffer, capacity, token, 0)
        guard first > 0 else { return nil }
        let path = buffer.withMemoryRebound(to: UInt8.self, capacity: Int(first)) {
            PercentEncoding.encodePath(UnsafeBufferPointer(start: $0, count: Int(first)))
        }
        let splitPath = lws_hdr_copy_fragment(wsi, buffer, capacity, token, 1) >= 0 || Int32(first) != uriLength

        var headers: [(name: String, value: String)] = []
        var contentLength = ContentLength.absent
        var transferEncoding: String?
        var expectation: String?
        var connection: String?
        var forwardedFor: String?
        for index in 0..<knownTokens.count {
            let token = knownTokens[index]
            guard lws_hdr_total_length(wsi, token) > 0 else { continue }
            let length = lws_hdr_copy(wsi, buffer, capacity, token)
            guard length >= 0 else { continue }
            let value = string(length: Int(length))
            headers.append((name: knownNames[index], value: value))
            switch token {
            case WSI_TOKEN_HTTP_CONTENT_LENGTH: contentLength = Self.parseContentLength(value)
            case WSI_TOKEN_HTTP_TRANSFER_ENCODING: transferEncoding = value
            case WSI_TOKEN_HTTP_EXPECT: expectation = value
            case WSI_TOKEN_CONNECTION: connection = value
            case WSI_TOKEN_X_FORWARDED_FOR: forwardedFor = value
            default: break
            }
        }
        for index in 0..<customKeyRanges.count {
            let (offset, keyLength) = customKeyRanges[index]
            let key = customKeys.baseAddress! + offset
            guard lws_hdr_custom_length(wsi, key, keyLength) >= 0 else { continue }
            let length = lws_hdr_custom_copy(wsi, buffer, capacity, key, keyLength)
            if length >= 0 {
                headers.append((name: customNames[index], value: string(length: Int(length))))
            }
        }

        let version = httpVersion(wsi)
        let isHTTP11 = version == "HTTP/1.1"
        let head = HTTPRequestHead(method: method, path: path, query: readQuery(wsi),
                                   headers: HTTPHeaders(fields: headers),
                                   remoteAddress: trustedProxies.client(peer: peerAddress, forwardedFor: forwardedFor))
        return Facts(head: head,
                     contentLength: contentLength,
                     transferEncoding: transferEncoding,
                     expectsContinue: isHTTP11 && expectation?.lowercased() == "100-continue",
                     isHTTP11: isHTTP11,
                     keepAlive: Self.keepAlive(isHTTP11: isHTTP11, connection: connection),
                     isSupportedVersion: isHTTP11 || version == "HTTP/1.0",
                     splitPath: splitPath)
    }

    /// Whether lws will read a body for this request after `LWS_CALLBACK_HTTP`, i.e. give it a
    /// non-zero `rx_content_length` in `lws_http_action()`: a `content-length` other than 0, or
    /// none on a `POST` (lws then assumes 100 MB; `PUT` and `PATCH` may be treated alike).
    /// Errs towards `true`: any method but `GET HEAD DELETE OPTIONS` counts.
    func lwsWillReadBody(_ wsi: OpaquePointer) -> Bool {
        if lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 {
            let length = lws_hdr_copy(wsi, buffer, capacity, WSI_TOKEN_HTTP_CONTENT_LENGTH)
            return length < 0 || Self.parseContentLength(string(length: Int(length))) != .value(0)
        }
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        switch Int(lws_http_get_uri_and_method(wsi, &uri, &uriLength)) {
        case LWSHUMETH_GET, LWSHUMETH_HEAD, LWSHUMETH_DELETE, LWSHUMETH_OPTIONS: return false
        default: return true
        }
    }

    /// Joins the query arguments lws split (at `&` and `;`) and decoded, re-encoded.
    private func readQuery(_ wsi: OpaquePointer) -> String {
        guard lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) > 0 else { return "" }
        var arguments: [ArraySlice<UInt8>] = []
        var index: Int32 = 0
        while true {
            let length = lws_hdr_copy_fragment(wsi, buffer, capacity, WSI_TOKEN_HTTP_URI_ARGS, index)
            if length < 0 { break }
            arguments.append(buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                ArraySlice(UnsafeBufferPointer(start: $0, count: Int(length)))
            })
            index += 1
        }
        // lws "enforces a leading /" on the last URI fragment when it is empty, so a query
        // ending in `?` or `&` grows a final "/" argument.
        if arguments.last?.elementsEqual([UInt8(ascii: "/")]) == true {
            arguments.removeLast()
        }
        return PercentEncoding.encodeQuery(arguments)
    }

    /// The version of the request line, which lws stores under `WSI_TOKEN_HTTP` as sent
    /// (it accepts any text there); `""` when absent.
    private func httpVersion(_ wsi: OpaquePointer) -> String {
        let length = lws_hdr_copy(wsi, buffer, capacity, WSI_TOKEN_HTTP)
        guard length > 0 else { return "" }
        return string(length: Int(length))
    }

    /// The buffer's first `length` bytes as a string, trailing blanks removed.
    private func string(length: Int) -> String {
        buffer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            var end = length
            while end > 0 && (bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t")) {
                end -= 1
            }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: end), as: UTF8.self)
        }
    }

    /// Decimal digits only, no sign, no list (a repeated header arrives joined with ",").
    static func parseContentLength(_ value: String) -> ContentLength {
        var result = 0
        var sawDigit = false
        for byte in value.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return .malformed }
            let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return .malformed }
            result = sum
            sawDigit = true
        }
        return sawDigit ? .value(result) : .malformed
    }

    /// The same decision lws makes for `lws_http_transaction_completed`: HTTP/1.1 keeps the
    /// connection unless told `close`; HTTP/1.0 closes unless told `keep-alive`.
    static func keepAlive(isHTTP11: Bool, connection: String?) -> Bool {
        switch connection?.lowercased() {
        case "keep-alive"?: true
        case "close"?: false
        default: isHTTP11
        }
    }

    /// The header-table slot lws keeps the request target in for method `index`.
    static func uriToken(_ index: Int) -> lws_token_indexes? {
        switch index {
        case LWSHUMETH_GET: WSI_TOKEN_GET_URI
        case LWSHUMETH_POST: WSI_TOKEN_POST_URI
        case LWSHUMETH_OPTIONS: WSI_TOKEN_OPTIONS_URI
        case LWSHUMETH_PUT: WSI_TOKEN_PUT_URI
        case LWSHUMETH_PATCH: WSI_TOKEN_PATCH_URI
        case LWSHUMETH_DELETE: WSI_TOKEN_DELETE_URI
        case LWSHUMETH_HEAD: WSI_TOKEN_HEAD_URI
        default: nil
        }
    }

    static func methodName(_ index: Int) -> String? {
        switch index {
        case LWSHUMETH_GET: "GET"
        case LWSHUMETH_POST: "POST"
        case LWSHUMETH_OPTIONS: "OPTIONS"
        case LWSHUMETH_PUT: "PUT"
        case LWSHUMETH_PATCH: "PATCH"
        case LWSHUMETH_DELETE: "DELETE"
        case LWSHUMETH_HEAD: "HEAD"
        default: nil
        }
    }

    /// lws' token table: real headers are the entries spelled `name:` (method tokens end in a
    /// space, HTTP/2 pseudo-headers start with `:`).
    private static func headerTokens() -> [(token: lws_token_indexes, name: String)] {
        var result: [(token: lws_token_indexes, name: String)] = []
        for raw in 0..<WSI_TOKEN_COUNT.rawValue {
            let token = lws_token_indexes(rawValue: raw)
            guard let cName = lws_token_to_string(token) else { continue }
            let name = String(cString: cName)
            guard name.count > 1, name.hasSuffix(":"), !name.hasPrefix(":") else { continue }
            result.append((token, String(name.dropLast())))
        }
        return result
    }
}
