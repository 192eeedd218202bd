public import TandemCore

/// Allowed sharing options as both stores keep them: two columns holding
/// `CKAllowedSharingOptions`' wire strings (decisions R15–R17).
package enum SharingOptionRows {
    /// A value the store does not know reads as the narrowest choice (read-only, invited
    /// people only), the safe side of an unknown policy.
    package static func options(permission: String, access: String) -> AllowedSharingOptions {
        AllowedSharingOptions(permission: AllowedSharingOptions.PermissionOption(rawValue: permission) ?? .readOnly,
                              access: AllowedSharingOptions.AccessOption(rawValue: access) ?? .specifiedRecipientsOnly)
    }
}
