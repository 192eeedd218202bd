/// The activity identifier rule shared by the server and the SDK (decision C66).
extension Names {
    /// What a group activity identifier may be, in the words both the server's `BAD_REQUEST` and
    /// the SDK's `invalidArguments` use.
    public static let activityIdentifierRule =
        "a reverse-DNS name of 1-\(Limits.nameLength) characters: letters, digits, '.', '-' and '_', starting with a letter or digit"

    /// Whether `identifier` is a reverse-DNS-like activity type identifier: 1–255 ASCII letters,
    /// digits, `.`, `-` or `_`, the first a letter or digit (`com.example.draw`, or the SDK's
    /// default, a type's qualified name such as `MyApp.Drawing`).
    ///
    /// SharePlay's `GroupActivity.activityIdentifier` is an app's reverse-DNS name (bundle
    /// identifiers allow letters, digits, `-` and `.`); `_` is kept for Swift type names.
    /// Markup, spaces and generic brackets (`MyApp.Box<Swift.Int>`) are refused.
    public static func isValidActivityIdentifier(_ identifier: String) -> Bool {
        let utf8 = Array(identifier.utf8)
        guard let first = utf8.first, utf8.count <= Limits.nameLength, isAlphanumeric(first) else { return false }
        return utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
    }
}
