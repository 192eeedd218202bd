/// Which sharing choices are allowed (CloudKit's `CKAllowedSharingOptions`): the permission a
/// share may grant (`allowedParticipantPermissionOptions`) and who may join
/// (`allowedParticipantAccessOptions`). The operator sets one per container; an app narrows it
/// per share (the share record key `allowedSharingOptions`). `standard` allows everything.
///
/// Wire form, in a share record and a container's policy:
/// `{"allowedParticipantPermissionOptions": "ANY" | "READ_ONLY" | "READ_WRITE",
///   "allowedParticipantAccessOptions": "ANY" | "ANYONE_WITH_LINK" | "SPECIFIED_RECIPIENTS_ONLY"}`
/// (decisions R15–R17).
public struct AllowedSharingOptions: Sendable, Hashable {
    /// `CKSharingParticipantPermissionOption`: what a participant (or anyone with the link) may get.
    public enum PermissionOption: String, Sendable, CaseIterable {
        case any = "ANY"
        case readOnly = "READ_ONLY"
        case readWrite = "READ_WRITE"
    }

    /// `CKSharingParticipantAccessOption`: `anyoneWithLink` makes every share public
    /// (`publicPermission` not `NONE`); `specifiedRecipientsOnly` keeps every share private.
    public enum AccessOption: String, Sendable, CaseIterable {
        case any = "ANY"
        case anyoneWithLink = "ANYONE_WITH_LINK"
        case specifiedRecipientsOnly = "SPECIFIED_RECIPIENTS_ONLY"
    }

    public var permission: PermissionOption
    public var access: AccessOption

    public init(permission: PermissionOption = .any, access: AccessOption = .any) {
        self.permission = permission
        self.access = access
    }

    /// Everything allowed (`CKAllowedSharingOptions.standard`).
    public static let standard = AllowedSharingOptions()

    /// What both allow; nil when they have nothing in common (e.g. read-only and read-write).
    public func narrowed(by other: AllowedSharingOptions) -> AllowedSharingOptions? {
        func meet<T: Equatable>(_ a: T, _ b: T, any: T) -> T? { a == any ? b : (b == any || a == b ? a : nil) }
        guard let permission = meet(permission, other.permission, any: .any),
              let access = meet(access, other.access, any: .any) else { return nil }
        return AllowedSharingOptions(permission: permission, access: access)
    }

    /// Whether a participant may be given `permission` (`READ_ONLY` or `READ_WRITE`).
    public func allowsParticipant(_ permission: Share.Permission) -> Bool {
        switch self.permission {
        case .any: permission == .readOnly || permission == .readWrite
        case .readOnly: permission == .readOnly
        case .readWrite: permission == .readWrite
        }
    }

    /// Whether a share may have `publicPermission`: `NONE` unless only `anyoneWithLink` is
    /// allowed; anything else unless only `specifiedRecipientsOnly` is, and then only a
    /// permission `allowsParticipant` allows.
    public func allowsPublic(_ publicPermission: Share.Permission) -> Bool {
        if publicPermission == .none { return access != .anyoneWithLink }
        return access != .specifiedRecipientsOnly && allowsParticipant(publicPermission)
    }

    /// The permission to invite with when the inviter does not choose (membership prompts):
    /// `READ_WRITE` (Messages' "can make changes", W9) unless only `READ_ONLY` is allowed.
    public var defaultParticipantPermission: Share.Permission { permission == .readOnly ? .readOnly : .readWrite }

    /// Throws `BAD_REQUEST` unless a participant may be given `permission`.
    public func enforceParticipant(_ permission: Share.Permission, who: String) throws(CloudKitError) {
        guard allowsParticipant(permission) else {
            throw .badRequest("outside the allowed sharing options: \(who) cannot get \(permission.rawValue); this share allows \(permission == .readWrite ? "read-only" : "read-write") participants only")
        }
    }

    /// Throws `BAD_REQUEST` unless a share may have `publicPermission`.
    public func enforcePublic(_ publicPermission: Share.Permission) throws(CloudKitError) {
        guard allowsPublic(publicPermission) else {
            let why = switch (publicPermission, access) {
            case (.none, _): "shares here must be open to anyone with the link (ANYONE_WITH_LINK); set publicPermission"
            case (_, .specifiedRecipientsOnly): "shares here are for invited people only (SPECIFIED_RECIPIENTS_ONLY); publicPermission must be NONE"
            default: "publicPermission \(publicPermission.rawValue) is not an allowed permission (\(permission.rawValue) only)"
            }
            throw .badRequest("outside the allowed sharing options: \(why)")
        }
    }

    // MARK: Wire

    /// The wire dictionary (see the type's comment).
    public var json: JSONValue {
        .object(["allowedParticipantPermissionOptions": .string(permission.rawValue),
                 "allowedParticipantAccessOptions": .string(access.rawValue)])
    }

    /// Reads the wire dictionary; a missing (or null) key is `ANY`.
    /// - Throws: `BAD_REQUEST` naming `context` for anything else, an unknown key included.
    public init(json: JSONValue, context: String) throws(CloudKitError) {
        guard case .object(let o) = json else { throw .badRequest("\(context): allowedSharingOptions must be a dictionary") }
        // A misspelt key would otherwise leave that option at ANY without a word.
        for entry in o.entries where entry.key != "allowedParticipantPermissionOptions" && entry.key != "allowedParticipantAccessOptions" {
            throw .badRequest("\(context): unknown key '\(entry.key.prefix(64))' in allowedSharingOptions; its keys are "
                              + "allowedParticipantPermissionOptions and allowedParticipantAccessOptions")
        }
        self.init()
        if let value = o["allowedParticipantPermissionOptions"], !value.isNull {
            guard let s = value.stringValue, let option = PermissionOption(rawValue: s) else {
                throw .badRequest("\(context): allowedParticipantPermissionOptions must be ANY, READ_ONLY or READ_WRITE")
            }
            permission = option
        }
        if let value = o["allowedParticipantAccessOptions"], !value.isNull {
            guard let s = value.stringValue, let option = AccessOption(rawValue: s) else {
                throw .badRequest("\(context): allowedParticipantAccessOptions must be ANY, ANYONE_WITH_LINK or SPECIFIED_RECIPIENTS_ONLY")
            }
            access = option
        }
    }
}
