import Foundation
public import TandemStore

/// One highlight as the highlight center lists it (SharedWithYou `SWHighlight`, with the
/// attribution data `SWAttributionView` would render).
public struct Highlight: Sendable, Hashable {
    /// One conversation that shared the URL: its latest message there (D21).
    public struct Attribution: Sendable, Hashable {
        public var sender: String
        public var conversationID: String
        public var isGroup: Bool
        public var eventID: String
        /// Milliseconds since 1970.
        public var date: Int64
        public var pinned: Bool
        public var title: String?
    }

    /// Opaque and stable for the URL (`SWHighlight.identifier`).
    public var identifier: String
    public var url: String
    /// The newest attribution's date.
    public var date: Int64
    public var pinned: Bool
    /// Chosen first by interaction (D20).
    public var suggested: Bool
    /// Newest first, one per conversation.
    public var attributions: [Attribution]
    /// Set for a collaboration highlight (`SWCollaborationHighlight`).
    public var collaboration: StoredCollaboration?
}

/// Whether the viewer lets the app see highlights (a Tandem addition: Apple returns the same
/// empty list for "none" and "not allowed", spec pain point P2).
public enum HighlightAuthorization: String, Sendable {
    case allowed
    /// Shared with You is off for every app.
    case deniedGlobally
    /// Shared with You is off for this app.
    case deniedForApp
}
