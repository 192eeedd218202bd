import Foundation

/// Encodes and decodes record field dictionaries, `{"value": <value>, "type": "<TAG>"}`.
///
/// CloudKit Web Services: Types, "Record Field Dictionary". `type` is optional on requests and
/// inferred from the value (string → `STRING`, integer → `INT64`, fraction → `DOUBLE`, dictionary
/// with `recordName` → `REFERENCE`, with `latitude` → `LOCATION`, with `fileChecksum` or
/// `receipt` → `ASSETID`, array → list of the first element's type, or `DOUBLE_LIST` for numbers
/// with a fraction anywhere); an empty array needs a type. With `numbersAsStrings`, numbers may
/// arrive as strings and are sent as strings.
public enum FieldCodec {
    // MARK: Decoding

    /// Decodes one field dictionary. Throws `BAD_REQUEST` naming the field and the problem.
    public static func decodeField(_ json: JSONValue, name: String) throws(CloudKitError) -> FieldValue {
        guard case .object(let object) = json else {
            throw .badRequest("field '\(name)' must be a dictionary with 'value' (and optional 'type'), found \(json.kindName)")
        }
        guard let value = object["value"] else {
            throw .badRequest("field '\(name)' has no 'value'")
        }
        var declared: FieldType?
        var declaredGenericList = false
        if let typeJSON = object["type"], !typeJSON.isNull {
            guard let tag = typeJSON.stringValue else {
                throw .badRequest("field '\(name)': 'type' must be a string")
            }
            if tag == "LIST" {
                declaredGenericList = true
            } else {
                guard let type = FieldType(wireName: tag) else {
                    throw .badRequest("field '\(name)': unknown type '\(tag)'")
                }
                declared = type
            }
        }
        let type: FieldType
        if let declared {
            type = declared
        } else {
            type = try inferType(value, name: name, mustBeList: declaredGenericList)
        }
        return try decodeValue(value, as: type, name: name)
    }

    static func inferType(_ value: JSONValue, name: String, mustBeList: Bool) throws(CloudKitError) -> FieldType {
        if case .array(let items) = value {
            guard let first = items.first else {
                throw .badRequest("field '\(name)': an empty list needs a 'type' such as STRING_LIST")
            }
            guard case .scalar(let element) = try inferType(first, name: name, mustBeList: false) else {
                throw .badRequest("field '\(name)': lists of lists are not supported")
            }
            // JavaScript writes 2.0 as 2, so a number list with a fraction anywhere is DOUBLE_LIST.
            if element == .int64, items.contains(where: { if case .double = $0 { true } else { false } }) {
                return .list(.double)
            }
            return .list(element)
        }
        if mustBeList { throw .badRequest("field '\(name)': type LIST needs an array value") }
        switch value {
        case .string: return .scalar(.string)
        case .int: return .scalar(.int64)
        case .double: return .scalar(.double)
        case .object(let o):
            if o["recordName"] != nil { return .scalar(.reference) }
            if o["latitude"] != nil || o["longitude"] != nil { return .scalar(.location) }
            if o["fileChecksum"] != nil || o["receipt"] != nil { return .scalar(.asset) }
            throw .badRequest("field '\(name)': cannot infer the type of this dictionary; give a 'type'")
        case .null: throw .badRequest("field '\(name)': value is null")
        case .bool: throw .badRequest("field '\(name)': booleans are not a CloudKit type; use INT64 0 or 1")
        case .array: throw .badRequest("field '\(name)': unexpected array")
        case .fragment: throw .badRequest("field '\(name)': cannot infer the type of this value; give a 'type'")
        }
    }

    /// Decodes `value` as a value of `type`.
    public static func decodeValue(_ value: JSONValue, as type: FieldType, name: String) throws(CloudKitError) -> FieldValue {
        switch type {
        case .scalar(let scalar):
            return try decodeScalar(value, as: scalar, name: name)
        case .list(let element):
            guard case .array(let items) = value else {
                throw .badRequest("field '\(name)': type \(type) needs an array, found \(value.kindName)")
            }
            var decoded: [FieldValue] = []
            decoded.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                decoded.append(try decodeScalar(item, as: element, name: "\(name)[\(index)]"))
            }
            return .list(decoded, of: element)
        }
    }

    static func decodeScalar(_ value: JSONValue, as type: FieldType.ScalarType, name: String) throws(CloudKitError) -> FieldValue {
        switch type {
        case .string:
            guard let s = value.stringValue else { throw mismatch(name, type, value) }
            return .string(s)
        case .int64:
            return .int64(try integer(value, name: name, type: type))
        case .timestamp:
            return .timestamp(try integer(value, name: name, type: type))
        case .double:
            let d: Double
            if case .string(let s) = value {
                guard let parsed = Double(s) else { throw mismatch(name, type, value) }
                d = parsed
            } else if let n = value.doubleValue {
                d = n
            } else {
                throw mismatch(name, type, value)
            }
            guard d.isFinite else {
                throw .badRequest("field '\(name)': DOUBLE must be a finite number (NaN and infinities are refused)")
            }
            return .double(d)
        case .bytes:
            guard let s = value.stringValue else { throw mismatch(name, type, value) }
            guard let data = Data(base64Encoded: s) else {
                throw .badRequest("field '\(name)': BYTES must be base64 text")
            }
            return .bytes([UInt8](data))
        case .reference:
            return .reference(try decodeReference(value, name: name))
        case .location:
            return .location(try decodeLocation(value, name: name))
        case .asset:
            return .asset(try decodeAsset(value, name: name))
        }
    }

    static func integer(_ value: JSONValue, name: String, type: FieldType.ScalarType) throws(CloudKitError) -> Int64 {
        if case .string(let s) = value {
            guard let parsed = Int64(s) else { throw mismatch(name, type, value) }
            return parsed
        }
        guard let i = value.int64Value else {
            if case .double = value {
                throw .badRequest("field '\(name)': \(type.rawValue) must be a whole number within 64 bits")
            }
            throw mismatch(name, type, value)
        }
        return i
    }

    static func mismatch(_ name: String, _ type: FieldType.ScalarType, _ value: JSONValue) -> CloudKitError {
        .badRequest("field '\(name)': value of type \(type.rawValue) expected, found \(value.kindName)")
    }

    public static func decodeReference(_ value: JSONValue, name: String) throws(CloudKitError) -> Reference {
        guard case .object(let o) = value, let recordName = o["recordName"]?.stringValue else {
            throw .badRequest("field '\(name)': a REFERENCE is a dictionary with a 'recordName' string")
        }
        guard Names.isValidRecordOrZoneName(recordName) else {
            throw .badRequest("field '\(name)': invalid recordName in reference")
        }
        var action = Reference.Action.none
        if let actionJSON = o["action"], !actionJSON.isNull {
            guard let text = actionJSON.stringValue, let parsed = Reference.Action(rawValue: text) else {
                throw .badRequest("field '\(name)': reference 'action' must be NONE, DELETE_SELF or VALIDATE")
            }
            action = parsed
        }
        var zoneID: ZoneID?
        if let zoneJSON = o["zoneID"], !zoneJSON.isNull {
            zoneID = try RecordCodec.decodeZoneID(zoneJSON)
        }
        return Reference(recordName: recordName, zoneID: zoneID, action: action)
    }

    static func decodeLocation(_ value: JSONValue, name: String) throws(CloudKitError) -> Location {
        guard case .object(let o) = value else {
            throw .badRequest("field '\(name)': a LOCATION is a dictionary with 'latitude' and 'longitude'")
        }
        func number(_ key: String, required: Bool) throws(CloudKitError) -> Double? {
            guard let v = o[key], !v.isNull else {
                if required { throw .badRequest("field '\(name)': location needs '\(key)'") }
                return nil
            }
            let d: Double?
            if case .string(let s) = v { d = Double(s) } else { d = v.doubleValue }
            guard let d, d.isFinite else { throw .badRequest("field '\(name)': location '\(key)' must be a finite number") }
            return d
        }
        let latitude = try number("latitude", required: true)!
        let longitude = try number("longitude", required: true)!
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw .badRequest("field '\(name)': latitude must be within ±90 and longitude within ±180 degrees")
        }
        var timestamp: Int64?
        if let t = o["timestamp"], !t.isNull {
            timestamp = try integer(t, name: "\(name).timestamp", type: .timestamp)
        }
        return Location(latitude: latitude, longitude: longitude,
                        horizontalAccuracy: try number("horizontalAccuracy", required: false),
                        verticalAccuracy: try number("verticalAccuracy", required: false),
                        altitude: try number("altitude", required: false),
                        speed: try number("speed", required: false),
                        course: try number("course", required: false),
                        timestamp: timestamp)
    }

    static func decodeAsset(_ value: JSONValue, name: String) throws(CloudKitError) -> Asset {
        guard case .object(let o) = value else {
            throw .badRequest("field '\(name)': an ASSET is the dictionary returned by an asset upload")
        }
        func text(_ key: String) throws(CloudKitError) -> String? {
            guard let v = o[key], !v.isNull else { return nil }
            guard let s = v.stringValue else { throw .badRequest("field '\(name)': asset '\(key)' must be a string") }
            return s
        }
        guard let checksum = try text("fileChecksum") else {
            throw .badRequest("field '\(name)': asset needs 'fileChecksum' (from the upload receipt)")
        }
        guard let sizeJSON = o["size"], let size = sizeJSON.int64Value ?? sizeJSON.stringValue.flatMap({ Int64($0) }), size >= 0 else {
            throw .badRequest("field '\(name)': asset needs a non-negative integer 'size'")
        }
        return Asset(fileChecksum: checksum, size: size, referenceChecksum: try text("referenceChecksum"),
                     wrappingKey: try text("wrappingKey"), receipt: try text("receipt"), downloadURL: try text("downloadURL"))
    }

    // MARK: Encoding

    /// Encodes a field as `{"value": ..., "type": ...}`.
    public static func encodeField(_ field: FieldValue, numbersAsStrings: Bool = false) -> JSONValue {
        .object(["value": encodeValue(field, numbersAsStrings: numbersAsStrings), "type": .string(field.type.wireName)])
    }

    public static func encodeValue(_ field: FieldValue, numbersAsStrings: Bool = false) -> JSONValue {
        switch field {
        case .string(let s): return .string(s)
        case .int64(let i), .timestamp(let i): return numbersAsStrings ? .string(String(i)) : .int(i)
        case .double(let d): return numbersAsStrings ? .string(String(d)) : .double(d)
        case .bytes(let b): return .string(Data(b).base64EncodedString())
        case .reference(let r): return encodeReference(r)
        case .location(let l): return encodeLocation(l, numbersAsStrings: numbersAsStrings)
        case .asset(let a): return encodeAsset(a)
        case .list(let items, _): return .array(items.map { encodeValue($0, numbersAsStrings: numbersAsStrings) })
        }
    }

    public static func encodeReference(_ r: Reference) -> JSONValue {
        var o: JSONObject = ["recordName": .string(r.recordName)]
        if let zoneID = r.zoneID { o["zoneID"] = RecordCodec.encodeZoneID(zoneID) }
        o["action"] = .string(r.action.rawValue)
        return .object(o)
    }

    static func encodeLocation(_ l: Location, numbersAsStrings: Bool) -> JSONValue {
        func n(_ d: Double) -> JSONValue { numbersAsStrings ? .string(String(d)) : .double(d) }
        var o: JSONObject = ["latitude": n(l.latitude), "longitude": n(l.longitude)]
        if let v = l.horizontalAccuracy { o["horizontalAccuracy"] = n(v) }
        if let v = l.verticalAccuracy { o["verticalAccuracy"] = n(v) }
        if let v = l.altitude { o["altitude"] = n(v) }
        if let v = l.speed { o["speed"] = n(v) }
        if let v = l.course { o["course"] = n(v) }
        if let v = l.timestamp { o["timestamp"] = numbersAsStrings ? .string(String(v)) : .int(v) }
        return .object(o)
    }

    static func encodeAsset(_ a: Asset) -> JSONValue {
        var o: JSONObject = ["fileChecksum": .string(a.fileChecksum), "size": .int(a.size)]
        if let v = a.referenceChecksum { o["referenceChecksum"] = .string(v) }
        if let v = a.wrappingKey { o["wrappingKey"] = .string(v) }
        if let v = a.receipt { o["receipt"] = .string(v) }
        if let v = a.downloadURL { o["downloadURL"] = .string(v) }
        return .object(o)
    }
}
