import CCBOR

/// A CBOR data item (RFC 8949) of the kinds WebAuthn uses: attestation objects, COSE keys and
/// authenticator extensions. Decoded by Debian's libcbor, then copied into Swift values.
enum CBORValue: Sendable, Hashable {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([CBORKey: CBORValue])
    case bool(Bool)
    case null

    /// The member `key` of a map, or nil (also when this is not a map).
    subscript(key: CBORKey) -> CBORValue? {
        if case .map(let members) = self { return members[key] }
        return nil
    }
}

/// A map key: an integer (COSE labels) or a text string (attestation object members).
enum CBORKey: Sendable, Hashable {
    case int(Int64)
    case text(String)
}

/// Why bytes are not a CBOR item this decoder accepts.
enum CBORError: Error, Equatable, Sendable {
    /// The input is longer than `CBOR.maximumBytes`.
    case tooLarge(Int)
    /// Arrays and maps nest deeper than `CBOR.maximumDepth`.
    case tooDeep
    /// The bytes end too early or are not CBOR (libcbor's error and the byte offset).
    case malformed(String)
    /// Well-formed CBOR that WebAuthn does not use: tags, floats, indefinite lengths, integers
    /// beyond Int64, map keys other than integers and text, duplicate map keys, invalid UTF-8.
    case unsupported(String)
}

/// Decoding of WebAuthn's CBOR through libcbor, bounded in size and depth.
enum CBOR {
    /// The longest input accepted (16 KiB; an attestation object with a certificate chain is
    /// about 1–2 KiB, a `none` one about 200 bytes).
    static let maximumBytes = 16 * 1024
    /// The deepest nesting of arrays and maps accepted (WebAuthn needs 3: attestation object →
    /// attStmt → x5c).
    static let maximumDepth = 8

    /// The whole input as one item.
    /// - Throws: `CBORError` (also `.malformed` when bytes follow the item).
    static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
        let (value, used) = try decodePrefix(bytes[...])
        guard used == bytes.count else { throw .malformed("\(bytes.count - used) bytes after the item") }
        return value
    }

    /// The first item of `bytes` and how many bytes it took (authenticator data holds a COSE key
    /// followed by more data).
    /// - Throws: `CBORError`.
    static func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(CBORError) -> (CBORValue, Int) {
        guard bytes.count <= maximumBytes else { throw .tooLarge(bytes.count) }
        guard !bytes.isEmpty else { throw .malformed("no data") }
        var result = cbor_load_result()
        let loaded: UnsafeMutablePointer<cbor_item_t>? = bytes.withUnsafeBufferPointer { buffer in
            cbor_load(buffer.baseAddress, buffer.count, &result)
        }
        guard let item = loaded else {
            let reason: String
            switch result.error.code {
            case CBOR_ERR_NOTENOUGHDATA, CBOR_ERR_NODATA: reason = "the data ends inside an item"
            case CBOR_ERR_MEMERROR: reason = "too large to hold"
            default: reason = "not CBOR"
            }
            throw .malformed("\(reason) (at byte \(result.error.position))")
        }
        var owned: UnsafeMutablePointer<cbor_item_t>? = item
        defer { cbor_decref(&owned) }
        return (try value(item, depth: 0), result.read)
    }

    private static func value(_ item: UnsafeMutablePointer<cbor_item_t>, depth: Int) throws(CBORError) -> CBORValue {
        switch cbor_typeof(item) {
        case CBOR_TYPE_UINT:
            let n = cbor_get_int(item)
            guard n <= UInt64(Int64.max) else { throw .unsupported("an integer beyond 64-bit signed") }
            return .int(Int64(n))
        case CBOR_TYPE_NEGINT:
            let n = cbor_get_int(item)
            guard n <= UInt64(Int64.max) else { throw .unsupported("an integer beyond 64-bit signed") }
            return .int(-1 - Int64(n))
        case CBOR_TYPE_BYTESTRING:
            guard cbor_bytestring_is_definite(item) else { throw .unsupported("an indefinite-length byte string") }
            return .bytes(Array(UnsafeBufferPointer(start: cbor_bytestring_handle(item), count: cbor_bytestring_length(item))))
        case CBOR_TYPE_STRING:
            guard cbor_string_is_definite(item) else { throw .unsupported("an indefinite-length text string") }
            let utf8 = UnsafeBufferPointer(start: cbor_string_handle(item), count: cbor_string_length(item))
            guard let text = String(validating: utf8, as: UTF8.self) else { throw .unsupported("a text string that is not UTF-8") }
            return .text(text)
        case CBOR_TYPE_ARRAY:
            guard depth < maximumDepth else { throw .tooDeep }
            guard cbor_array_is_definite(item) else { throw .unsupported("an indefinite-length array") }
            let count = cbor_array_size(item)
            guard let handle = cbor_array_handle(item) else { return .array([]) }
            var values: [CBORValue] = []
            values.reserveCapacity(count)
            for index in 0..<count {
                guard let element = handle[index] else { throw .malformed("an empty array slot") }
                values.append(try value(element, depth: depth + 1))
            }
            return .array(values)
        case CBOR_TYPE_MAP:
            guard depth < maximumDepth else { throw .tooDeep }
            guard cbor_map_is_definite(item) else { throw .unsupported("an indefinite-length map") }
            let count = cbor_map_size(item)
            guard let handle = cbor_map_handle(item) else { return .map([:]) }
            var members: [CBORKey: CBORValue] = [:]
            for index in 0..<count {
                guard let keyItem = handle[index].key, let valueItem = handle[index].value else { throw .malformed("an empty map slot") }
                let key: CBORKey
                switch try value(keyItem, depth: depth + 1) {
                case .int(let n): key = .int(n)
                case .text(let text): key = .text(text)
                default: throw .unsupported("a map key that is neither an integer nor text")
                }
                guard members[key] == nil else { throw .unsupported("a duplicate map key") }
                members[key] = try value(valueItem, depth: depth + 1)
            }
            return .map(members)
        case CBOR_TYPE_FLOAT_CTRL:
            if cbor_float_ctrl_is_ctrl(item) {
                switch cbor_ctrl_value(item) {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: break
                }
            }
            throw .unsupported("a float or simple value")
        default:
            throw .unsupported("a tagged item")
        }
    }
}
