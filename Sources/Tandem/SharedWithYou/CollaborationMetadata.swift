public import Foundation

/// One switch, or one value of a picker, in a collaboration's share options
/// (SharedWithYou `SWCollaborationOption`).
public struct CollaborationOption: Sendable, Hashable, Identifiable {
    public var title: String
    public var identifier: String
    public var subtitle: String
    public var isSelected: Bool
    /// Options that must be selected before this one can be changed.
    public var requiredOptionsIdentifiers: [String]

    public var id: String { identifier }

    public init(title: String, identifier: String, subtitle: String = "", selected: Bool = false, requiredOptionsIdentifiers: [String] = []) {
        self.title = title
        self.identifier = identifier
        self.subtitle = subtitle
        self.isSelected = selected
        self.requiredOptionsIdentifiers = requiredOptionsIdentifiers
    }
}

/// Independent switches (SharedWithYou `SWCollaborationOptionsGroup`); one option renders as
/// a single switch.
public struct CollaborationOptionsGroup: Sendable, Hashable, Identifiable {
    public var identifier: String
    public var title: String
    public var footer: String
    public var options: [CollaborationOption]

    public var id: String { identifier }

    public init(identifier: String, title: String = "", footer: String = "", options: [CollaborationOption]) {
        self.identifier = identifier
        self.title = title
        self.footer = footer
        self.options = options
    }
}

/// Mutually exclusive values, such as "Can make changes" / "Read only" (SharedWithYou
/// `SWCollaborationOptionsPickerGroup`).
public struct CollaborationOptionsPickerGroup: Sendable, Hashable, Identifiable {
    public var identifier: String
    public var title: String
    public var footer: String
    public var options: [CollaborationOption]
    /// Defaults to the first option's identifier.
    public var selectedOptionIdentifier: String?

    public var id: String { identifier }

    public init(identifier: String, title: String = "", footer: String = "", options: [CollaborationOption], selectedOptionIdentifier: String? = nil) {
        self.identifier = identifier
        self.title = title
        self.footer = footer
        self.options = options
        self.selectedOptionIdentifier = selectedOptionIdentifier ?? options.first?.identifier
    }
}

/// The options a collaboration offers or the user picked (SharedWithYou
/// `SWCollaborationShareOptions`).
public struct CollaborationShareOptions: Sendable, Hashable {
    /// A group of switches or a picker.
    public enum Group: Sendable, Hashable {
        case options(CollaborationOptionsGroup)
        case picker(CollaborationOptionsPickerGroup)
    }

    public var optionsGroups: [Group]
    /// The one-line summary of the share sheet header; nil shows "Share Options".
    public var summary: String?

    public init(optionsGroups: [Group], summary: String? = nil) {
        self.optionsGroups = optionsGroups
        self.summary = summary
    }
}

/// What an app says about content it wants to collaborate on (SharedWithYou
/// `SWCollaborationMetadata`): a local identifier until the start action gives it a
/// collaboration identifier.
public struct CollaborationMetadata: Sendable, Hashable {
    /// Globally unique; nil until the start action is fulfilled.
    public var collaborationIdentifier: String?
    /// Unique on this device; identifies the item before a collaboration exists.
    public var localIdentifier: String
    public var title: String?
    /// A uniform type identifier of the content (Tandem addition: carried into the highlight's `contentType`).
    public var contentType: String
    public var defaultShareOptions: CollaborationShareOptions?
    /// What the user picked before sending; delivered in the start action.
    public var userSelectedShareOptions: CollaborationShareOptions?
    /// Shown locally only, never sent to recipients.
    public var initiatorHandle: String?
    public var initiatorNameComponents: PersonNameComponents?

    public init(localIdentifier: String, title: String? = nil, contentType: String = "public.data",
                defaultShareOptions: CollaborationShareOptions? = nil, initiatorHandle: String? = nil,
                initiatorNameComponents: PersonNameComponents? = nil) {
        self.localIdentifier = localIdentifier
        self.title = title
        self.contentType = contentType
        self.defaultShareOptions = defaultShareOptions
        self.initiatorHandle = initiatorHandle
        self.initiatorNameComponents = initiatorNameComponents
    }

    public init(collaborationIdentifier: String, title: String? = nil, contentType: String = "public.data") {
        self.collaborationIdentifier = collaborationIdentifier
        self.localIdentifier = collaborationIdentifier
        self.title = title
        self.contentType = contentType
    }
}
