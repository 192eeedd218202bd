/// A person as others see them (CloudKit's `CKUserIdentity`): a user record name when they
/// have an account, the lookup info they were found by, and name components.
///
/// CloudKit Web Services, Types: "User Identity" (`userRecordName`, `lookupInfo`,
/// `nameComponents`) and "Lookup Info" (`emailAddress`, `phoneNumber`, `userRecordName`).
public struct UserIdentity: Sendable, Hashable {
    /// Nil for an invitee who has no account yet.
    public var userRecordName: String?
    public var emailAddress: String?
    public var phoneNumber: String?
    public var givenName: String?
    public var familyName: String?
    /// Tandem's `avatarURL`: a signed URL of the person's picture, given where their name is
    /// visible to the reader (their own identity, or a discoverable person's; decisions A48).
    public var avatarURL: String?

    public init(userRecordName: String? = nil, emailAddress: String? = nil, phoneNumber: String? = nil,
                givenName: String? = nil, familyName: String? = nil, avatarURL: String? = nil) {
        self.userRecordName = userRecordName
        self.emailAddress = emailAddress
        self.phoneNumber = phoneNumber
        self.givenName = givenName
        self.familyName = familyName
        self.avatarURL = avatarURL
    }

    /// True when the person has an account (the framework's `hasiCloudAccount`).
    public var hasAccount: Bool { userRecordName != nil }

    /// Whether two identities name the same person: the same user record name, or (when either
    /// lacks one) the same email address (case-insensitive) or phone number. CKShare.Participant
    /// equality is identity equality in the same way.
    public func isSamePerson(as other: UserIdentity) -> Bool {
        if let a = userRecordName, let b = other.userRecordName { return a == b }
        if let a = emailAddress, let b = other.emailAddress, a.lowercased() == b.lowercased() { return true }
        if let a = phoneNumber, let b = other.phoneNumber, PhoneNumbers.normalize(a) == PhoneNumbers.normalize(b) { return true }
        return false
    }
}

/// Phone numbers compared by their digits and a leading `+` only, so `+1 (555) 010-2000` and
/// `+15550102000` are one number.
public enum PhoneNumbers {
    public static func normalize(_ number: String) -> String {
        var out = ""
        for (index, c) in number.enumerated() where c.isASCII && (c.isNumber || (c == "+" && index == 0)) { out.append(c) }
        return out
    }

    /// At least 5 digits once normalised.
    public static func isValid(_ number: String) -> Bool {
        normalize(number).filter(\.isNumber).count >= 5
    }
}

/// Email addresses as lookup keys: one `@`, a local part of 1–64 bytes and a dotted domain,
/// at most 254 bytes (RFC 5321 limits), no spaces, control characters or `<>()[]\,;:"`.
/// Internationalised addresses (UTF-8) are allowed.
public enum EmailAddresses {
    public static let maximumLength = 254
    private static let forbidden: Set<Unicode.Scalar> = Set("<>()[]\\,;:\"".unicodeScalars)

    public static func isValid(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...64).contains(parts[0].utf8.count), address.utf8.count <= maximumLength else { return false }
        let domain = parts[1]
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains("..") else { return false }
        return address.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !forbidden.contains($0) }
    }
}
