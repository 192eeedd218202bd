internal import TandemCore

/// Which sharing choices a share allows (`CKAllowedSharingOptions`): the permission people may
/// get and whether the share is for anyone with its link or for invited people only.
///
/// ```swift
/// var share = Share(rootRecord: trip)
/// share.allowedSharingOptions = AllowedSharingOptions(allowedParticipantPermissionOptions: .readOnly,
///                                                     allowedParticipantAccessOptions: .specifiedRecipientsOnly)
/// ```
///
/// The server's operator sets a policy per container (`tandem container sharing-options`); a
/// share's options narrow it. A save, a *Collaborate* send (`ShareMode.collaborate`) or an
/// approval (`Container.approveRequesters`) that would grant outside them fails with
/// `TandemError` `.invalidArguments` and writes nothing (server code `BAD_REQUEST`, reason
/// starting "outside the allowed sharing options"; decisions R15–R17). A share's options that
/// have nothing in common with the container's (read-only there, read-write here) fail the same way.
public struct AllowedSharingOptions: Sendable, Hashable {
    /// `CKSharingParticipantPermissionOption`.
    public enum ParticipantPermissionOption: String, Sendable, Hashable, CaseIterable {
        case any = "ANY"
        /// Participants and anyone with the link may only read.
        case readOnly = "READ_ONLY"
        /// Participants and anyone with the link may make changes.
        case readWrite = "READ_WRITE"
    }

    /// `CKSharingParticipantAccessOption`.
    public enum ParticipantAccessOption: String, Sendable, Hashable, CaseIterable {
        case any = "ANY"
        /// The share must be public: `publicPermission` other than `.none`.
        case anyoneWithLink = "ANYONE_WITH_LINK"
        /// The share must be private: `publicPermission` `.none`, people are invited.
        case specifiedRecipientsOnly = "SPECIFIED_RECIPIENTS_ONLY"
    }

    public var allowedParticipantPermissionOptions: ParticipantPermissionOption
    public var allowedParticipantAccessOptions: ParticipantAccessOption

    public init(allowedParticipantPermissionOptions: ParticipantPermissionOption = .any,
                allowedParticipantAccessOptions: ParticipantAccessOption = .any) {
        self.allowedParticipantPermissionOptions = allowedParticipantPermissionOptions
        self.allowedParticipantAccessOptions = allowedParticipantAccessOptions
    }

    /// Everything allowed (`CKAllowedSharingOptions.standard`).
    public static let standard = AllowedSharingOptions()

    init(wire: TandemCore.AllowedSharingOptions) {
        self.init(allowedParticipantPermissionOptions: ParticipantPermissionOption(rawValue: wire.permission.rawValue) ?? .any,
                  allowedParticipantAccessOptions: ParticipantAccessOption(rawValue: wire.access.rawValue) ?? .any)
    }

    /// The `allowedSharingOptions` dictionary of a share save.
    var json: JSONValue {
        .object(["allowedParticipantPermissionOptions": .string(allowedParticipantPermissionOptions.rawValue),
                 "allowedParticipantAccessOptions": .string(allowedParticipantAccessOptions.rawValue)])
    }
}
