import CJansson

/// Why a JSON text could not be read, with the 1-based line and column Jansson reports.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    /// Byte offset into the input.
    public var position: Int

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// Parses JSON text into `JSONValue`, using Jansson (a well-kept C parser: strict RFC 8259,
/// UTF-8 validated, exact 64-bit integers, precise error positions).
///
/// - Rejects: trailing commas, comments, NaN/Infinity literals, duplicate keys, integers outside
///   Int64, invalid UTF-8, a raw NUL byte anywhere, and anything after the top-level value.
/// - Accepts `\u0000` inside strings.
public enum JSONParser {
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var error = json_error_t()
        let flags = size_t(JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)
        let root: UnsafeMutablePointer<json_t>? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                json_loadb(chars.baseAddress, chars.count, flags, &error)
            }
        }
        // Jansson's lexer reads a raw NUL as the end of the text, so `{"a":1}\0garbage` parsed
        // and the rest was silently dropped. RFC 8259 allows no raw NUL, not even inside a
        // string: one is refused, unless Jansson found another error before it.
        let nul = bytes.firstIndex(of: 0)
        guard let root else {
            if let nul, nul <= Int(error.position) { throw Self.nulError(bytes, at: nul) }
            let text = withUnsafeBytes(of: error.text) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            throw JSONParseError(message: text, line: Int(error.line), column: Int(error.column), position: Int(error.position))
        }
        defer { tandem_json_decref(root) }
        if let nul { throw Self.nulError(bytes, at: nul) }
        return convert(root)
    }

    private static func nulError(_ bytes: [UInt8], at nul: Int) -> JSONParseError {
        let before = bytes[..<nul]
        let line = before.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
        let column = nul - (before.lastIndex(of: 10).map { $0 + 1 } ?? 0) + 1
        return JSONParseError(message: "NUL byte in JSON text", line: line, column: column, position: nul)
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private static func convert(_ node: UnsafeMutablePointer<json_t>) -> JSONValue {
        switch node.pointee.type {
        case JSON_OBJECT:
            var entries: [(key: String, value: JSONValue)] = []
            entries.reserveCapacity(json_object_size(node))
            var iterator = json_object_iter(node)
            while let current = iterator {
                let key = String(cString: json_object_iter_key(current))
                entries.append((key: key, value: convert(json_object_iter_value(current))))
                iterator = json_object_iter_next(node, current)
            }
            return .object(JSONObject(entries))
        case JSON_ARRAY:
            let count = json_array_size(node)
            var items: [JSONValue] = []
            items.reserveCapacity(count)
            for index in 0..<count { items.append(convert(json_array_get(node, index))) }
            return .array(items)
        case JSON_STRING:
            let length = json_string_length(node)
            guard let pointer = json_string_value(node) else { return .string("") }
            return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
                .string(String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self))
            }
        case JSON_INTEGER: return .int(Int64(json_integer_value(node)))
        case JSON_REAL: return .double(json_real_value(node))
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        default: return .null
        }
    }
}
