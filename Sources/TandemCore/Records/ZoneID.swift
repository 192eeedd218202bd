/// Identifies a record zone: `zoneName` plus the owner's user record name.
///
/// CloudKit Web Services: the zone ID dictionary (`zoneName`, `ownerRecordName`). The default
/// zone is `_defaultZone`; an absent owner means the caller.
public struct ZoneID: Sendable, Hashable, Codable {
    public static let defaultZoneName = "_defaultZone"

    public var zoneName: String
    public var ownerRecordName: String?

    public init(zoneName: String, ownerRecordName: String? = nil) {
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
    }

    public static let defaultZone = ZoneID(zoneName: defaultZoneName)

    public var isDefaultZone: Bool { zoneName == Self.defaultZoneName }
}

/// Name rules of decisions D12.
public enum Names {
    /// Record and zone names: 1–255 printable ASCII characters (0x20–0x7E).
    public static func isValidRecordOrZoneName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= Limits.nameLength else { return false }
        return utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// Field names: a letter, then letters, digits or `_`, at most 255 characters. Names starting
    /// with `_` belong to the system and are refused for user fields.
    public static func isValidFieldName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard let first = utf8.first, utf8.count <= Limits.nameLength, isLetter(first) else { return false }
        return utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") }
    }

    /// Record type names follow the field-name grammar; `cloudkit.share` is the one system type.
    public static func isValidRecordType(_ name: String) -> Bool {
        name == "cloudkit.share" || isValidFieldName(name)
    }

    private static func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
}
