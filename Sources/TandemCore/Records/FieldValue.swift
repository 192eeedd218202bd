/// The value of one record field.
///
/// Integers and timestamps are exact 64-bit values (timestamps in milliseconds since
/// 1970-01-01 UTC); doubles are always finite; bytes are raw (base64 on the wire). A list keeps
/// its element type so an empty list round-trips with its type.
public enum FieldValue: Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case timestamp(Int64)
    case bytes([UInt8])
    case reference(Reference)
    case location(Location)
    case asset(Asset)
    case list([FieldValue], of: FieldType.ScalarType)

    public var type: FieldType {
        switch self {
        case .string: .scalar(.string)
        case .int64: .scalar(.int64)
        case .double: .scalar(.double)
        case .timestamp: .scalar(.timestamp)
        case .bytes: .scalar(.bytes)
        case .reference: .scalar(.reference)
        case .location: .scalar(.location)
        case .asset: .scalar(.asset)
        case .list(_, let element): .list(element)
        }
    }

    /// True for an asset or a list of assets (their download URLs are added when encoding).
    public var holdsAsset: Bool {
        switch type {
        case .scalar(.asset), .list(.asset): true
        default: false
        }
    }

    /// The scalar elements: the list's items, or the value itself.
    public var elements: [FieldValue] {
        if case .list(let items, _) = self { return items }
        return [self]
    }
}

/// A reference to another record (CloudKit Web Services: Reference dictionary).
public struct Reference: Sendable, Hashable {
    /// What happens to the record holding the reference when its target goes.
    public enum Action: String, Sendable, CaseIterable {
        /// Nothing.
        case none = "NONE"
        /// Deleting the target deletes the record holding the reference.
        case deleteSelf = "DELETE_SELF"
        /// The target must exist when the reference is saved, and cannot be deleted while referenced.
        case validate = "VALIDATE"
    }

    public var recordName: String
    public var zoneID: ZoneID?
    public var action: Action

    public init(recordName: String, zoneID: ZoneID? = nil, action: Action = .none) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.action = action
    }
}

/// A location (CloudKit Web Services: Location dictionary). Degrees, metres, metres per second;
/// `timestamp` in milliseconds since 1970.
public struct Location: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var altitude: Double?
    public var speed: Double?
    public var course: Double?
    public var timestamp: Int64?

    public init(latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
                altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Int64? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }

    /// Great-circle distance in metres (haversine, mean Earth radius 6,371,008.8 m).
    public func distance(to other: Location) -> Double {
        let r = 6_371_008.8
        let toRadians = Double.pi / 180
        let dLat = (other.latitude - latitude) * toRadians
        let dLon = (other.longitude - longitude) * toRadians
        let a = sinSquared(dLat / 2) + cosine(latitude * toRadians) * cosine(other.latitude * toRadians) * sinSquared(dLon / 2)
        return 2 * r * arcsine(min(1, a.squareRoot()))
    }
}

/// An asset value (CloudKit Web Services: Asset dictionary). `fileChecksum` is the hex SHA-256
/// of the bytes in Tandem; `size` in bytes. `receipt` appears only on requests (from
/// `assets/upload`), `downloadURL` only on responses.
public struct Asset: Sendable, Hashable {
    public var fileChecksum: String
    public var size: Int64
    public var referenceChecksum: String?
    public var wrappingKey: String?
    public var receipt: String?
    public var downloadURL: String?

    public init(fileChecksum: String, size: Int64, referenceChecksum: String? = nil, wrappingKey: String? = nil,
                receipt: String? = nil, downloadURL: String? = nil) {
        self.fileChecksum = fileChecksum
        self.size = size
        self.referenceChecksum = referenceChecksum
        self.wrappingKey = wrappingKey
        self.receipt = receipt
        self.downloadURL = downloadURL
    }
}
