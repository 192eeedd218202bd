/// Where a change feed was read up to (CloudKit's `CKServerChangeToken`): opaque, versioned and
/// MAC-protected by the server (DESIGN.md §4). Keep it (it is `Codable`) and pass it back to
/// read only what changed since. A token older than the server's history (30 days by default,
/// decisions S6) makes the fetch throw `changeTokenExpired`: fetch again without a token.
public struct ServerChangeToken: Sendable, Hashable, Codable, CustomStringConvertible {
    let value: String

    init(_ value: String) { self.value = value }

    public init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public var description: String { "ServerChangeToken(\(value.prefix(12))…)" }
}
