/// Splits `.ckdb` text into tokens, skipping white space and the three comment styles
/// (`// ...`, `-- ...` to the end of the line, `/* ... */` not nested). Spec §5.2.
///
/// Throws `SchemaError` for a character no token starts with, a quoted identifier that is
/// empty or not closed on its line, and a block comment never closed.
struct Lexer {
    private let bytes: [UInt8]
    private let file: String
    private var index = 0
    private var line = 1
    private var column = 1

    init(_ text: String, file: String) {
        self.bytes = Array(text.utf8)
        self.file = file
    }

    /// Every token of the text, ending with `.end`.
    mutating func tokens() throws(SchemaError) -> [Token] {
        var tokens: [Token] = []
        while true {
            try skipSpaceAndComments()
            let location = SourceLocation(line: line, column: column)
            guard let byte = peek() else {
                tokens.append(Token(kind: .end, location: location))
                return tokens
            }
            let kind: Token.Kind
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "<"), UInt8(ascii: ">"):
                advance()
                kind = .symbol(byte)
            case UInt8(ascii: "\""):
                kind = .quoted(try quoted(from: location))
            case _ where Identifier.isLetter(byte) || byte == UInt8(ascii: "_"):
                let text = word()
                kind = .word(text, upper: Identifier.uppercased(text))
            default:
                throw SchemaError(file: file, at: location, expected: "a name, a keyword or one of ( ) , ; < >",
                                  found: "'\(character(at: index))'")
            }
            tokens.append(Token(kind: kind, location: location))
        }
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    /// Moves past one byte, keeping line and column (a column per Unicode scalar).
    private mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipSpaceAndComments() throws(SchemaError) {
        while let byte = peek() {
            switch (byte, peek(1)) {
            case (UInt8(ascii: " "), _), (UInt8(ascii: "\t"), _), (UInt8(ascii: "\n"), _), (UInt8(ascii: "\r"), _):
                advance()
            case (UInt8(ascii: "/"), UInt8(ascii: "/")?), (UInt8(ascii: "-"), UInt8(ascii: "-")?):
                while let b = peek(), b != UInt8(ascii: "\n") { advance() }
            case (UInt8(ascii: "/"), UInt8(ascii: "*")?):
                let start = SourceLocation(line: line, column: column)
                advance(); advance()
                while !(peek() == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/")) {
                    guard peek() != nil else {
                        throw SchemaError(file: file, at: start, message: "comment '/*' is never closed with '*/'")
                    }
                    advance()
                }
                advance(); advance()
            default:
                return
            }
        }
    }

    private mutating func word() -> String {
        let start = index
        while let b = peek(), Identifier.isLetter(b) || Identifier.isDigit(b) || b == UInt8(ascii: "_") { advance() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func quoted(from location: SourceLocation) throws(SchemaError) -> String {
        advance()
        let start = index
        while let b = peek(), b != UInt8(ascii: "\""), b != UInt8(ascii: "\n") { advance() }
        guard peek() == UInt8(ascii: "\"") else {
            throw SchemaError(file: file, at: location, message: "quoted name is not closed with '\"' on its line")
        }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        advance()
        guard !name.isEmpty else { throw SchemaError(file: file, at: location, message: "a quoted name cannot be empty") }
        return name
    }

    /// The whole character starting at byte `i`, for messages.
    private func character(at i: Int) -> String {
        var end = i + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[i..<end], as: UTF8.self)
    }
}
