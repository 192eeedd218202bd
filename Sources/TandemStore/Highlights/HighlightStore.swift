/// A consent switch: global (target `""`), per app (target the app ID) or per conversation
/// (target the conversation ID). Absent switches are on.
public struct StoredConsent: Sendable, Hashable {
    public enum Scope: String, Sendable, CaseIterable {
        case global, app, conversation
    }

    public var scope: Scope
    public var target: String
    public var allowed: Bool

    public init(scope: Scope, target: String, allowed: Bool) {
        self.scope = scope
        self.target = target
        self.allowed = allowed
    }
}

/// Reads of a viewer's highlight state: consent, hidden URLs, interactions.
public protocol HighlightReading {
    func consent(viewer: String) throws -> [StoredConsent]
    func hiddenURLs(viewer: String) throws -> Set<String>
    /// Interaction weight per URL since `time` (milliseconds).
    func interactionScores(viewer: String, since time: Int64) throws -> [String: Int64]
}

/// Writes of a viewer's highlight state, inside a transaction.
public protocol HighlightWriting: HighlightReading {
    func setConsent(viewer: String, _ consent: StoredConsent) throws
    func hide(viewer: String, url: String, at time: Int64) throws
    func addInteraction(viewer: String, url: String, weight: Int64, at time: Int64) throws
    /// Deletes interactions older than `time`.
    func purgeInteractions(before time: Int64) throws
}
