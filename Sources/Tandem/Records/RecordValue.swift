public import Foundation
internal import TandemCore

/// A value a record field can hold (the role of `CKRecordValue`).
///
/// | Swift | Wire type | Read back as |
/// |---|---|---|
/// | `String` | `STRING` | `String` |
/// | `Int`, `Int64`, `Bool` (0/1) | `INT64` | `NSNumber`: cast it `as? Int`, `as? Int64` or `as? Bool` |
/// | `Double` | `DOUBLE` | `Double` |
/// | `Date` (millisecond precision) | `TIMESTAMP` | `Date` |
/// | `Data` | `BYTES` | `Data` |
/// | `Reference`, `Location`, `Asset` | `REFERENCE`, `LOCATION`, `ASSET` | the same |
/// | an array of one of those (`[Bool]` too) | `..._LIST` | an array (`[NSNumber]` for `INT64_LIST`: `as? [Int]`) |
///
/// A number comes back as CloudKit hands it back, an `NSNumber`, so `record["stars"] as? Int`,
/// `as? Int64` and (for 0 and 1) `as? Bool` all read the `5` or `true` that was stored (decisions
/// F32). Arrays of arrays do not compile (`RecordListElement`). A type of the app's own made a
/// `RecordValue` cannot be stored: saving a record holding one throws `invalidArguments` naming
/// the field (F31).
///
/// CloudKit Web Services: Types, "Record Field Dictionary".
public protocol RecordValue: Sendable {}

/// A value a list field can hold: every `RecordValue` but a list, so `[[Int]]` is not a record
/// value (CloudKit has no lists of lists; decisions F30).
public protocol RecordListElement: RecordValue {}

extension String: RecordListElement {}
extension Int: RecordListElement {}
extension Int64: RecordListElement {}
extension Bool: RecordListElement {}
extension Double: RecordListElement {}
extension Date: RecordListElement {}
extension Data: RecordListElement {}
extension NSNumber: RecordListElement {}
extension Reference: RecordListElement {}
extension Location: RecordListElement {}
extension Asset: RecordListElement {}
extension Array: RecordValue where Element: RecordListElement {}

/// Conversions between Swift field values and TandemCore's `FieldValue`.
enum FieldValues {
    /// The wire value of `value`, or nil for a type the SDK cannot store (an app's own `RecordValue`).
    static func encode(_ value: any RecordValue) -> FieldValue? {
        // Checked first by dynamic type: Swift casts an NSNumber `as? Int` and `as? Double` too.
        if let number = value as? NSNumber, type(of: value) is NSNumber.Type { return number.fieldValue }
        if type(of: value) == [NSNumber].self, let numbers = value as? [NSNumber] {
            let values = numbers.map(\.fieldValue)
            let isDouble = values.contains { if case .double = $0 { true } else { false } }
            return isDouble ? .list(numbers.map { .double($0.doubleValue) }, of: .double) : .list(values, of: .int64)
        }
        return switch value {
        case let v as String: .string(v)
        case let v as Int: .int64(Int64(v))
        case let v as Int64: .int64(v)
        case let v as Bool: .int64(v ? 1 : 0)
        case let v as Double: .double(v)
        case let v as Date: .timestamp(milliseconds(v))
        case let v as Data: .bytes([UInt8](v))
        case let v as Reference: .reference(wire(v))
        case let v as Location: .location(wire(v))
        case let v as Asset: .asset(wire(v))
        case let v as [String]: .list(v.map { .string($0) }, of: .string)
        case let v as [Int]: .list(v.map { .int64(Int64($0)) }, of: .int64)
        case let v as [Int64]: .list(v.map { .int64($0) }, of: .int64)
        case let v as [Bool]: .list(v.map { .int64($0 ? 1 : 0) }, of: .int64)
        case let v as [Double]: .list(v.map { .double($0) }, of: .double)
        case let v as [Date]: .list(v.map { .timestamp(milliseconds($0)) }, of: .timestamp)
        case let v as [Data]: .list(v.map { .bytes([UInt8]($0)) }, of: .bytes)
        case let v as [Reference]: .list(v.map { .reference(wire($0)) }, of: .reference)
        case let v as [Location]: .list(v.map { .location(wire($0)) }, of: .location)
        case let v as [Asset]: .list(v.map { .asset(wire($0)) }, of: .asset)
        default: nil
        }
    }

    static func decode(_ value: FieldValue, zoneID: RecordZone.ID) -> any RecordValue {
        switch value {
        case .string(let s): return s
        case .int64(let i): return NSNumber(value: i)
        case .double(let d): return d
        case .timestamp(let t): return date(t)
        case .bytes(let b): return Data(b)
        case .reference(let r): return reference(r, zoneID: zoneID)
        case .location(let l): return location(l)
        case .asset(let a): return asset(a)
        case .list(let items, let type):
            switch type {
            case .string: return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            case .int64: return items.compactMap { if case .int64(let i) = $0 { NSNumber(value: i) } else { nil } }
            case .double: return items.compactMap { if case .double(let d) = $0 { d } else { nil } }
            case .timestamp: return items.compactMap { if case .timestamp(let t) = $0 { date(t) } else { nil } }
            case .bytes: return items.compactMap { if case .bytes(let b) = $0 { Data(b) } else { nil } }
            case .reference: return items.compactMap { if case .reference(let r) = $0 { reference(r, zoneID: zoneID) } else { nil } }
            case .location: return items.compactMap { if case .location(let l) = $0 { location(l) } else { nil } }
            case .asset: return items.compactMap { if case .asset(let a) = $0 { asset(a) } else { nil } }
            }
        }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    static func wire(_ r: Reference) -> TandemCore.Reference {
        TandemCore.Reference(recordName: r.recordID.recordName, zoneID: r.recordID.zoneID.wire,
                             action: TandemCore.Reference.Action(rawValue: r.action.rawValue) ?? .none)
    }

    static func reference(_ r: TandemCore.Reference, zoneID: RecordZone.ID) -> Reference {
        let zone = r.zoneID.map { RecordZone.ID(zoneName: $0.zoneName, ownerName: zoneID.ownerName) } ?? zoneID
        return Reference(recordID: Record.ID(recordName: r.recordName, zoneID: zone),
                         action: Reference.Action(rawValue: r.action.rawValue) ?? .none)
    }

    static func wire(_ l: Location) -> TandemCore.Location {
        TandemCore.Location(latitude: l.latitude, longitude: l.longitude, horizontalAccuracy: l.horizontalAccuracy,
                            verticalAccuracy: l.verticalAccuracy, altitude: l.altitude, speed: l.speed, course: l.course,
                            timestamp: l.timestamp.map(milliseconds))
    }

    static func location(_ l: TandemCore.Location) -> Location {
        Location(latitude: l.latitude, longitude: l.longitude, altitude: l.altitude, horizontalAccuracy: l.horizontalAccuracy,
                 verticalAccuracy: l.verticalAccuracy, speed: l.speed, course: l.course, timestamp: l.timestamp.map(date))
    }

    /// An asset not yet uploaded has no checksum; `Database` uploads it before encoding.
    static func wire(_ a: Asset) -> TandemCore.Asset {
        TandemCore.Asset(fileChecksum: a.fileChecksum ?? "", size: a.size ?? 0, receipt: a.receipt)
    }

    static func asset(_ a: TandemCore.Asset) -> Asset {
        Asset(fileChecksum: a.fileChecksum, size: a.size, receipt: nil, downloadURL: a.downloadURL.flatMap(URL.init(string:)))
    }
}

private extension NSNumber {
    /// `DOUBLE` for a floating-point number, else `INT64` (booleans and integers).
    var fieldValue: FieldValue {
        switch String(cString: objCType) {
        case "d", "f": .double(doubleValue)
        default: .int64(int64Value)
        }
    }
}
