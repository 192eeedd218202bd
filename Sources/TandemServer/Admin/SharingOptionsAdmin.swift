public import TandemCore
public import TandemStore

/// The operator's allowed sharing options for a container (`CKAllowedSharingOptions`;
/// decisions R15): `tandem container sharing-options ID [--permission …] [--access …]`.
public enum SharingOptionsAdmin {
    /// The container's options (`standard` until set).
    /// - Throws: `NOT_FOUND` for an unknown container.
    public static func options(container: String, store: any Store) throws -> AllowedSharingOptions {
        guard let options = try store.read({ try $0.allowedSharingOptions(container: container) }) else {
            throw CloudKitError(.notFound, "no container '\(container)'")
        }
        return options
    }

    /// Changes the options given (nil keeps one) and returns them as now stored. A running
    /// server applies them to the next share save, *Collaborate* send, membership prompt and
    /// approval; shares saved before keep what they were granted.
    /// - Throws: `NOT_FOUND` for an unknown container, `BAD_REQUEST` for an unknown option.
    public static func set(container: String, permission: String?, access: String?, store: any Store) throws -> AllowedSharingOptions {
        let newPermission: AllowedSharingOptions.PermissionOption? = try permission.map { try option($0, flag: "permission") }
        let newAccess: AllowedSharingOptions.AccessOption? = try access.map { try option($0, flag: "access") }
        return try store.write { tx in
            guard var options = try tx.allowedSharingOptions(container: container) else {
                throw CloudKitError(.notFound, "no container '\(container)'")
            }
            if let newPermission { options.permission = newPermission }
            if let newAccess { options.access = newAccess }
            _ = try tx.setAllowedSharingOptions(options, container: container)
            return options
        }
    }

    /// The option `text` names: Apple's case name (`readOnly`, `anyoneWithLink`) or the wire
    /// string (`READ_ONLY`, `ANYONE_WITH_LINK`).
    /// - Throws: `BAD_REQUEST` naming `--flag` and the case names.
    static func option<T: CaseIterable & RawRepresentable>(_ text: String, flag: String) throws -> T where T.RawValue == String {
        for option in T.allCases where option.rawValue == text || caseName(option.rawValue) == text { return option }
        throw CloudKitError.badRequest("--\(flag) must be \(T.allCases.map { caseName($0.rawValue) }.joined(separator: ", "))")
    }

    /// `READ_ONLY` → `readOnly`.
    static func caseName(_ wire: String) -> String {
        wire.lowercased().split(separator: "_").enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }
            .joined()
    }

    /// `permission=READ_ONLY access=ANY`, as the CLI prints it.
    public static func line(_ options: AllowedSharingOptions) -> String {
        "permission=\(options.permission.rawValue) access=\(options.access.rawValue)"
    }
}
