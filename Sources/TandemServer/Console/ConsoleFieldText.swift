import Foundation
import TandemCore

/// A record field's value as the console's forms write it, and back (decisions C21). The text
/// becomes the wire JSON of CloudKit Web Services' field dictionary, which `FieldCodec` then
/// decodes exactly as for `records/modify`, so the console accepts what the API accepts:
///
/// - `STRING`: the text as typed, line breaks as LF. `INT64`, `DOUBLE`: a number. `BYTES`: base64.
/// - `TIMESTAMP`: ISO 8601 UTC (`2026-12-03T04:05:06Z`, fractional seconds allowed) or
///   milliseconds since 1970.
/// - `REFERENCE`: the target's record name, in the record's zone (action `NONE`, or the action the
///   field held for that same target).
/// - `LOCATION`: `latitude, longitude` in degrees.
/// - A list: one element per line (blank lines ignored).
/// - `ASSETID`: not written as text; an asset comes from an upload (`assets/upload`).
enum ConsoleFieldText {
    /// The value types a form offers, assets left out.
    static let editableTypes: [FieldType] = FieldType.ScalarType.allCases.filter { $0 != .asset }.flatMap { [FieldType.scalar($0), .list($0)] }

    /// Decodes `text` as a value of `type`. Throws `BAD_REQUEST` with a reason fit to show beside
    /// the field (it names the field as `name`).
    static func value(_ text: String, type: FieldType, name: String, previous: FieldValue? = nil) throws(CloudKitError) -> FieldValue {
        // A browser sends a text box's line breaks as CR LF (HTML's form encoding), whatever the
        // value held. A text the form showed for the stored value and sent back unchanged (line
        // breaks aside) keeps that value exactly, as a list's empty items and a string's own line
        // breaks cannot travel through the text box; a changed STRING is read with LF (C32).
        if let previous, previous.type == type, lineFeeds(Self.text(previous)) == lineFeeds(text) { return previous }
        let text = type == .scalar(.string) ? lineFeeds(text) : text
        let json: JSONValue
        switch type {
        case .scalar(let scalar):
            json = try scalarJSON(text.trimmingCharacters(in: scalar == .string ? [] : .whitespacesAndNewlines), scalar, name: name)
        case .list(let scalar):
            let lines = text.split(whereSeparator: \.isNewline).map(String.init)
                .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            var items: [JSONValue] = []
            for (index, line) in lines.enumerated() {
                items.append(try scalarJSON(scalar == .string ? line : line.trimmingCharacters(in: .whitespaces), scalar, name: "\(name) line \(index + 1)"))
            }
            json = .array(items)
        }
        var value = try FieldCodec.decodeValue(json, as: type, name: name)
        // A reference keeps the action it had when it still names the same target.
        if case .reference(var reference) = value, case .reference(let old)? = previous, old.recordName == reference.recordName {
            reference.action = old.action
            reference.zoneID = old.zoneID
            value = .reference(reference)
        }
        return value
    }

    /// `text` with CR LF and lone CR line breaks as LF.
    static func lineFeeds(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
    }

    private static func scalarJSON(_ text: String, _ type: FieldType.ScalarType, name: String) throws(CloudKitError) -> JSONValue {
        switch type {
        case .string, .int64, .double, .bytes:
            if type != .string && text.isEmpty { throw .badRequest("\(name): a \(type.rawValue) needs a value") }
            if type == .int64 && Int64(text) == nil { throw .badRequest("\(name): '\(text)' is not a whole number (INT64)") }
            if type == .double && Double(text) == nil { throw .badRequest("\(name): '\(text)' is not a number (DOUBLE)") }
            return .string(text)
        case .timestamp:
            if let milliseconds = Int64(text) { return .int(milliseconds) }
            guard let milliseconds = timestamp(text) else {
                throw .badRequest("\(name): a TIMESTAMP is ISO 8601 (2026-12-03T04:05:06Z) or milliseconds since 1970")
            }
            return .int(milliseconds)
        case .reference:
            guard Names.isValidRecordOrZoneName(text) else { throw .badRequest("\(name): a REFERENCE is the record name of its target") }
            return .object(["recordName": .string(text), "action": .string(Reference.Action.none.rawValue)])
        case .location:
            let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let latitude = parts[0], let longitude = parts[1] else {
                throw .badRequest("\(name): a LOCATION is 'latitude, longitude' in degrees")
            }
            return .object(["latitude": .double(latitude), "longitude": .double(longitude)])
        case .asset:
            throw .badRequest("\(name): an asset is uploaded by an app (assets/upload), not typed in")
        }
    }

    /// The text a form shows for `value` (what `value(_:type:name:)` reads back).
    static func text(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): s
        case .int64(let i): String(i)
        case .double(let d): String(d)
        case .timestamp(let t): iso(t)
        case .bytes(let b): Data(b).base64EncodedString()
        case .reference(let r): r.recordName
        case .location(let l): "\(l.latitude), \(l.longitude)"
        case .asset(let a): a.fileChecksum
        case .list(let items, _): items.map(text).joined(separator: "\n")
        }
    }

    /// Milliseconds since 1970 as ISO 8601 UTC with milliseconds (`2026-12-03T04:05:06.789Z`).
    static func iso(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int32(milliseconds - Int64(seconds) * 1000))
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS[.fff]]Z` (a space for `T`, `Z` optional: UTC).
    static func timestamp(_ text: String) -> Int64? {
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?Z?$"#
        guard let match = try? NSRegularExpression(pattern: pattern).firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        func number(_ index: Int) -> Int? {
            guard let range = Range(match.range(at: index), in: text) else { return nil }
            return Int(text[range])
        }
        guard let year = number(1), let month = number(2), let day = number(3), let hour = number(4), let minute = number(5),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60 else { return nil }
        let second = number(6) ?? 0
        guard second < 60 else { return nil }
        var fraction = 0
        if let range = Range(match.range(at: 7), in: text) {
            let digits = String(text[range])
            fraction = (Int(digits) ?? 0) * [100, 10, 1][digits.count - 1]
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        guard parts.tm_mday == Int32(day) else { return nil }  // 31 February rolled over
        return Int64(seconds) * 1000 + Int64(fraction)
    }
}

private extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
