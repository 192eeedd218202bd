/// `Codable` for JSON held as values, so that types carrying a `JSONValue` or a `JSONObject`
/// (a notification's `notificationInfo`, a conversation envelope) can be `Codable` too (the
/// server's bus events between nodes, decisions N2).
///
/// A value is encoded as one string holding its JSON text (`JSONWriter`) and decoded with
/// `JSONParser`: whatever the outer coder, integers keep all 64 bits, an integer stays an
/// integer and not a double, and an object keeps its key order, which a keyed container would
/// lose. A fragment is written out as its text and comes back parsed.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try JSONParser.parse(text)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath,
                                                                    debugDescription: "not JSON text: \(error)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(JSONWriter.string(self))
    }
}

/// An object as ``JSONValue`` encodes one: its JSON text in a string.
extension JSONObject: Codable {
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not a JSON object"))
        }
        self = object
    }

    public func encode(to encoder: any Encoder) throws { try JSONValue.object(self).encode(to: encoder) }
}
