/// A `.ckdb` file that does not parse or breaks a rule of the schema language, with where and
/// why: `description` is `FILE:LINE:COLUMN: message`, the shape compilers use, so editors can
/// jump to it.
///
/// Syntax errors carry `expected` and `found` (`expected ')' or ',', found 'STRING'`);
/// rule errors (a duplicate field, an unknown role) carry only `message`. Lines and columns
/// count from 1; columns count Unicode scalars. Spec §5.2.
public struct SchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file name given to the parser, as given.
    public var file: String
    public var line: Int
    public var column: Int
    /// What the grammar allowed here, for syntax errors.
    public var expected: String?
    /// What the file had instead (`'STRNG'`, `end of file`), for syntax errors.
    public var found: String?
    /// The whole human-readable reason.
    public var message: String

    public init(file: String, at location: SourceLocation, expected: String, found: String) {
        self.init(file: file, at: location, message: "expected \(expected), found \(found)")
        self.expected = expected
        self.found = found
    }

    public init(file: String, at location: SourceLocation, message: String) {
        self.file = file
        self.line = location.line
        self.column = location.column
        self.message = message
    }

    public var description: String { "\(file):\(line):\(column): \(message)" }
}

/// A position in a source file; both counts start at 1.
public struct SourceLocation: Sendable, Hashable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}
