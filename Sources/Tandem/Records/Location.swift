public import Foundation

/// A geographic location in a record field (the role of `CLLocation` in CloudKit).
///
/// Degrees, metres and metres per second. CloudKit Web Services: Location dictionary.
public struct Location: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var speed: Double?
    public var course: Double?
    public var timestamp: Date?

    public init(latitude: Double, longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double? = nil,
                verticalAccuracy: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Date? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }
}
