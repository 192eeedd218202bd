import TandemCore

extension AssociationFile {
    /// Parses an association file's bytes.
    ///
    /// - Throws: `AssociationFileError` when the file is over `maximumSize` (D25), is not JSON
    ///   (trailing commas, comments, HTML served by mistake, a signed file: line and column of the
    ///   first fault), is not a JSON object, or has a value of the wrong type where matching
    ///   depends on it (JSON path of the first one). Unknown keys are not errors; `Linter`
    ///   reports them. Never "matches nothing" silently.
    public static func parse(_ bytes: [UInt8]) throws(AssociationFileError) -> AssociationFile {
        var reader = AssociationFileReader()
        let file = reader.read(try readJSON(bytes))
        if let first = reader.diagnostics.first(where: { $0.severity == .error }) {
            throw AssociationFileError(first.location, first.message)
        }
        return file
    }

    /// The file's JSON document after the size check; a malformed text's error has its line,
    /// column and, when the text is recognisably something else, what it looks like.
    static func readJSON(_ bytes: [UInt8]) throws(AssociationFileError) -> JSONValue {
        guard bytes.count <= maximumSize else {
            throw AssociationFileError(.file, "the file is \(bytes.count) bytes; iOS ignores association files over \(maximumSize) bytes (128 KiB)")
        }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            let hint = MalformedTextHint.describe(bytes, at: error.position).map { " (\($0))" } ?? ""
            throw AssociationFileError(.text(line: error.line, column: error.column), "not valid JSON: \(error.message)\(hint)")
        }
    }
}

/// Recognises the usual things served in place of an association file.
enum MalformedTextHint {
    /// `position` is the parser's byte offset, just after the token it stopped at.
    static func describe(_ bytes: [UInt8], at position: Int) -> String? {
        let start = bytes.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        if start.isEmpty { return "the file is empty" }
        if start.first == UInt8(ascii: "<") { return "this is HTML or XML, not JSON: the server returned a page instead of the file" }
        if start.starts(with: Array("---".utf8)) { return "this is a page template's front matter, not JSON" }
        if start.first == 0x30, start.dropFirst().first == 0x82 || start.dropFirst().first == 0x80 {
            return "this is a signed (PKCS #7) file; since iOS 9 the file must be unsigned JSON"
        }
        if start.starts(with: Array("echo ".utf8)) { return "this is a shell command, not its output" }
        let end = min(max(position, 0), bytes.count)
        let near = bytes[max(0, end - 2)..<min(bytes.count, end + 1)]
        if near.starts(with: Array("//".utf8)) || near.dropFirst().starts(with: Array("//".utf8))
            || near.starts(with: Array("/*".utf8)) || near.dropFirst().starts(with: Array("/*".utf8)) {
            return "JSON has no comments"
        }
        if end > 0, bytes[end - 1] == UInt8(ascii: "]") || bytes[end - 1] == UInt8(ascii: "}"),
           bytes[..<(end - 1)].last(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: ",") {
            return "a trailing comma before the closing bracket"
        }
        return nil
    }
}
