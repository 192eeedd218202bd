/// One lexical unit of a `.ckdb` file.
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        /// An unquoted word: a keyword or a plain identifier (`RECORD`, `title`, `INT64`),
        /// and its ASCII upper case, made once, for matching keywords.
        case word(String, upper: String)
        /// A double-quoted identifier, without its quotes (`___recordID`, `cloudkit.share`).
        case quoted(String)
        /// One of `( ) , ; < >`.
        case symbol(UInt8)
        case end
    }

    var kind: Kind
    var location: SourceLocation

    /// True for an unquoted word equal to `keyword` ignoring ASCII case (keywords are
    /// case-insensitive, like the lower-case reserved words in spec §5.2 suggest).
    func isKeyword(_ keyword: String) -> Bool {
        guard case .word(_, let upper) = kind else { return false }
        return upper == keyword
    }

    func isSymbol(_ symbol: UInt8) -> Bool { kind == .symbol(symbol) }

    /// How an error message shows the token: `'title'`, `'"___etag"'`, `')'`, `end of file`.
    var shown: String {
        switch kind {
        case .word(let text, _): "'\(text)'"
        case .quoted(let text): "'\"\(text)\"'"
        case .symbol(let byte): "'\(Character(Unicode.Scalar(byte)))'"
        case .end: "end of file"
        }
    }
}
