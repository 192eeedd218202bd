/// Identifier rules of the schema language (spec §5.2): an unquoted identifier starts with a
/// letter and goes on with letters, digits and underscores; a keyword the grammar would
/// misread (`grant`, `preferred`, `queryable`, `sortable`, `searchable`), a system name and any
/// other name must be double-quoted. Names starting with `_` belong to the system.
enum Identifier {
    /// Words that cannot be unquoted names, in upper case (they are matched ignoring case).
    static let reserved: Set<String> = ["GRANT", "PREFERRED", "QUERYABLE", "SORTABLE", "SEARCHABLE"]

    /// True when `name` can be written without quotes.
    static func isPlain(_ name: String) -> Bool {
        var bytes = name.utf8.makeIterator()
        guard let first = bytes.next(), isLetter(first) else { return false }
        while let byte = bytes.next() {
            guard isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") else { return false }
        }
        return !reserved.contains(uppercased(name))
    }

    /// `name` as the printer writes it: bare when it may be, otherwise in double quotes.
    static func printed(_ name: String) -> String {
        isPlain(name) ? name : "\"\(name)\""
    }

    /// ASCII upper case; keywords are ASCII, so other characters never matter.
    static func uppercased(_ text: String) -> String {
        String(decoding: text.utf8.map { isLowercase($0) ? $0 - 32 : $0 }, as: UTF8.self)
    }

    static func isLetter(_ byte: UInt8) -> Bool { isLowercase(byte) || (byte >= 65 && byte <= 90) }
    static func isLowercase(_ byte: UInt8) -> Bool { byte >= 97 && byte <= 122 }
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }
}
