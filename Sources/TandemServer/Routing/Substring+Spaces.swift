extension StringProtocol {
    /// Without leading and trailing spaces and tabs (header values; cheaper than Foundation's
    /// `trimmingCharacters`, which goes through NSString on Linux).
    var withoutSurroundingSpaces: SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
