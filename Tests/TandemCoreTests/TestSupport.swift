import Testing
import TandemCore

// Helpers shared by the codec tests. Wire bodies are written as JSON text, as a client sends
// them, and go through the real parser so every test also exercises JSONParser.

/// Parses JSON text written in a test.
func json(_ text: String) throws -> JSONValue {
    try JSONParser.parse(text)
}

/// Decodes one record field dictionary given as JSON text.
func decodeField(_ text: String, name: String = "f") throws -> FieldValue {
    try FieldCodec.decodeField(try JSONParser.parse(text), name: name)
}

/// A field encoded as compact JSON text, exactly as a response carries it.
func wire(_ field: FieldValue, numbersAsStrings: Bool = false) -> String {
    JSONWriter.string(FieldCodec.encodeField(field, numbersAsStrings: numbersAsStrings))
}

/// The `CloudKitError` that `body` throws; records an issue and returns nil when it returns
/// normally or throws something else.
func refusal<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) -> CloudKitError? {
    do {
        let value = try body()
        Issue.record("expected a refusal, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as CloudKitError {
        return error
    } catch {
        Issue.record("expected a CloudKitError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The refusal of one field dictionary given as JSON text.
func fieldRefusal(_ text: String, name: String = "f", sourceLocation: SourceLocation = #_sourceLocation) -> CloudKitError? {
    refusal(sourceLocation: sourceLocation) { try decodeField(text, name: name) }
}

/// The `JSONParseError` for malformed text; records an issue when the text parses.
func parseFailure(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> JSONParseError? {
    do {
        let value = try JSONParser.parse(bytes)
        Issue.record("expected a parse error, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

func parseFailure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONParseError? {
    parseFailure(Array(text.utf8), sourceLocation: sourceLocation)
}

/// The exact Unicode scalars of a string. Swift's `==` on strings compares canonical
/// equivalence ("é" equals "e\u{301}"), which would hide a codec that normalises text.
func scalars(_ s: String) -> [UInt32] {
    s.unicodeScalars.map(\.value)
}
