/// The console's account search (`ConsoleReading.searchProfiles`) as both stores run it: a
/// `LIKE` pattern (SQLite `LIKE`, PostgreSQL `ILIKE` on `COLLATE "C"`, both folding ASCII letters
/// only) with `ESCAPE '\'`, so the text is matched literally, `%` and `_` included.
package enum ProfileSearch {
    /// `%text%`, with `\`, `%` and `_` in `text` escaped by `\`. Empty text gives `%%` (the stores
    /// list every account for it without matching).
    package static func containsPattern(_ text: String) -> String {
        var pattern = "%"
        for character in text {
            if character == "\\" || character == "%" || character == "_" { pattern.append("\\") }
            pattern.append(character)
        }
        return pattern + "%"
    }
}
