/// Lists both stores keep in one TEXT column as lines: a membership prompt's collaborations, an
/// API token's allowed origins. Members never hold a newline (identifiers, origins).
package enum StoredLines {
    /// The members, newline-separated.
    package static func join(_ members: [String]) -> String { members.joined(separator: "\n") }

    /// The non-empty lines of `text`, in order.
    package static func split(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }
}
