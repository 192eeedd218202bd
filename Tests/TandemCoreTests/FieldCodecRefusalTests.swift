import Testing
import TandemCore

/// Field dictionaries the codec refuses, each with `BAD_REQUEST` and a reason that names the
/// field and the problem.
@Suite struct FieldCodecRefusalTests {
    struct Refused: Sendable, CustomTestStringConvertible {
        let request: String
        let reason: String
        var testDescription: String { request }
    }

    @Test(arguments: [
        // DOUBLE must be finite; JSON has no NaN, so clients send it as a string.
        Refused(request: #"{"value":"NaN","type":"DOUBLE"}"#, reason: "field 'f': DOUBLE must be a finite number"),
        Refused(request: #"{"value":"nan","type":"DOUBLE"}"#, reason: "field 'f': DOUBLE must be a finite number"),
        Refused(request: #"{"value":"Infinity","type":"DOUBLE"}"#, reason: "field 'f': DOUBLE must be a finite number"),
        Refused(request: #"{"value":"-Infinity","type":"DOUBLE"}"#, reason: "field 'f': DOUBLE must be a finite number"),
        Refused(request: #"{"value":"inf","type":"DOUBLE"}"#, reason: "field 'f': DOUBLE must be a finite number"),
        Refused(request: #"{"value":"1e400","type":"DOUBLE"}"#, reason: "field 'f': DOUBLE must be a finite number"),
        Refused(request: #"{"value":["NaN"],"type":"DOUBLE_LIST"}"#, reason: "field 'f[0]': DOUBLE must be a finite number"),
        Refused(request: #"{"value":"two","type":"DOUBLE"}"#, reason: "field 'f': value of type DOUBLE expected, found a string"),
        // INT64 and TIMESTAMP are whole numbers within 64 bits.
        Refused(request: #"{"value":1.5,"type":"INT64"}"#, reason: "field 'f': INT64 must be a whole number within 64 bits"),
        Refused(request: #"{"value":-0.5,"type":"TIMESTAMP"}"#, reason: "field 'f': TIMESTAMP must be a whole number within 64 bits"),
        Refused(request: #"{"value":9.3e18,"type":"INT64"}"#, reason: "field 'f': INT64 must be a whole number within 64 bits"),
        Refused(request: #"{"value":"1.5","type":"INT64"}"#, reason: "field 'f': value of type INT64 expected, found a string"),
        Refused(request: #"{"value":"9223372036854775808","type":"INT64"}"#, reason: "field 'f': value of type INT64 expected, found a string"),
        Refused(request: #"{"value":[1,2.5],"type":"INT64_LIST"}"#, reason: "field 'f[1]': INT64 must be a whole number within 64 bits"),
        // Booleans are not a CloudKit type.
        Refused(request: #"{"value":true}"#, reason: "field 'f': booleans are not a CloudKit type; use INT64 0 or 1"),
        Refused(request: #"{"value":false,"type":"INT64"}"#, reason: "field 'f': value of type INT64 expected, found a boolean"),
        Refused(request: #"{"value":[true]}"#, reason: "field 'f': booleans are not a CloudKit type"),
        // BYTES is standard base64.
        Refused(request: #"{"value":"not base64!","type":"BYTES"}"#, reason: "field 'f': BYTES must be base64 text"),
        Refused(request: #"{"value":"QUJ","type":"BYTES"}"#, reason: "field 'f': BYTES must be base64 text"),
        Refused(request: #"{"value":"-_8=","type":"BYTES"}"#, reason: "field 'f': BYTES must be base64 text"),
        Refused(request: #"{"value":"QU JD","type":"BYTES"}"#, reason: "field 'f': BYTES must be base64 text"),
        Refused(request: #"{"value":12,"type":"BYTES"}"#, reason: "field 'f': value of type BYTES expected, found a number"),
        // Type tags.
        Refused(request: #"{"value":"x","type":"STRINGS"}"#, reason: "field 'f': unknown type 'STRINGS'"),
        Refused(request: #"{"value":"x","type":"string"}"#, reason: "field 'f': unknown type 'string'"),
        Refused(request: #"{"value":1,"type":"BOOLEAN"}"#, reason: "field 'f': unknown type 'BOOLEAN'"),
        Refused(request: #"{"value":"x","type":7}"#, reason: "field 'f': 'type' must be a string"),
        Refused(request: #"{"value":[]}"#, reason: "field 'f': an empty list needs a 'type' such as STRING_LIST"),
        Refused(request: #"{"value":[],"type":"LIST"}"#, reason: "field 'f': an empty list needs a 'type'"),
        Refused(request: #"{"value":"x","type":"LIST"}"#, reason: "field 'f': type LIST needs an array value"),
        // Shape of the field dictionary.
        Refused(request: #""Mei""#, reason: "field 'f' must be a dictionary with 'value' (and optional 'type'), found a string"),
        Refused(request: #"{"type":"STRING"}"#, reason: "field 'f' has no 'value'"),
        Refused(request: #"{"value":null}"#, reason: "field 'f': value is null"),
        Refused(request: #"{"value":{"width":18}}"#, reason: "field 'f': cannot infer the type of this dictionary; give a 'type'"),
        // LOCATION.
        Refused(request: #"{"value":{"latitude":90.5,"longitude":0},"type":"LOCATION"}"#,
                reason: "field 'f': latitude must be within ±90 and longitude within ±180 degrees"),
        Refused(request: #"{"value":{"latitude":-90.000001,"longitude":0},"type":"LOCATION"}"#,
                reason: "field 'f': latitude must be within ±90"),
        Refused(request: #"{"value":{"latitude":0,"longitude":180.5},"type":"LOCATION"}"#, reason: "longitude within ±180 degrees"),
        Refused(request: #"{"value":{"latitude":0,"longitude":-181},"type":"LOCATION"}"#, reason: "longitude within ±180 degrees"),
        Refused(request: #"{"value":{"latitude":"NaN","longitude":0},"type":"LOCATION"}"#, reason: "field 'f': location 'latitude' must be a finite number"),
        Refused(request: #"{"value":{"latitude":0,"longitude":0,"speed":"Infinity"},"type":"LOCATION"}"#, reason: "location 'speed' must be a finite number"),
        Refused(request: #"{"value":{"latitude":0,"longitude":0,"course":"east"},"type":"LOCATION"}"#, reason: "location 'course' must be a finite number"),
        Refused(request: #"{"value":{"latitude":1},"type":"LOCATION"}"#, reason: "field 'f': location needs 'longitude'"),
        Refused(request: #"{"value":{"longitude":1}}"#, reason: "field 'f': location needs 'latitude'"),
        Refused(request: #"{"value":{"latitude":0,"longitude":0,"timestamp":1.5},"type":"LOCATION"}"#,
                reason: "field 'f.timestamp': TIMESTAMP must be a whole number within 64 bits"),
        Refused(request: #"{"value":[1,2],"type":"LOCATION"}"#, reason: "field 'f': a LOCATION is a dictionary with 'latitude' and 'longitude'"),
        // REFERENCE.
        Refused(request: #"{"value":{"recordName":"r","action":"CASCADE"},"type":"REFERENCE"}"#,
                reason: "field 'f': reference 'action' must be NONE, DELETE_SELF or VALIDATE"),
        Refused(request: #"{"value":{"recordName":"r","action":"delete_self"},"type":"REFERENCE"}"#,
                reason: "reference 'action' must be NONE, DELETE_SELF or VALIDATE"),
        Refused(request: #"{"value":{"recordName":""},"type":"REFERENCE"}"#, reason: "field 'f': invalid recordName in reference"),
        Refused(request: #"{"value":{"recordName":"caf\u00e9"},"type":"REFERENCE"}"#, reason: "field 'f': invalid recordName in reference"),
        Refused(request: #"{"value":{"recordName":7},"type":"REFERENCE"}"#, reason: "field 'f': a REFERENCE is a dictionary with a 'recordName' string"),
        Refused(request: #"{"value":"r","type":"REFERENCE"}"#, reason: "a REFERENCE is a dictionary with a 'recordName' string"),
        Refused(request: #"{"value":{"recordName":"r","zoneID":{}},"type":"REFERENCE"}"#, reason: "zoneID needs a 'zoneName' string"),
        // ASSETID.
        Refused(request: #"{"value":{"size":3,"receipt":"r"}}"#, reason: "field 'f': asset needs 'fileChecksum' (from the upload receipt)"),
        Refused(request: #"{"value":{"fileChecksum":"c"},"type":"ASSETID"}"#, reason: "field 'f': asset needs a non-negative integer 'size'"),
        Refused(request: #"{"value":{"fileChecksum":"c","size":-1},"type":"ASSETID"}"#, reason: "asset needs a non-negative integer 'size'"),
        Refused(request: #"{"value":{"fileChecksum":"c","size":1.5},"type":"ASSETID"}"#, reason: "asset needs a non-negative integer 'size'"),
        Refused(request: #"{"value":{"fileChecksum":5,"size":1},"type":"ASSETID"}"#, reason: "field 'f': asset 'fileChecksum' must be a string"),
        Refused(request: #"{"value":{"fileChecksum":"c","size":1,"receipt":false},"type":"ASSETID"}"#, reason: "asset 'receipt' must be a string"),
        Refused(request: #"{"value":"receipt","type":"ASSETID"}"#, reason: "field 'f': an ASSET is the dictionary returned by an asset upload"),
    ])
    func refusedWithBadRequestAndAReason(_ c: Refused) {
        let error = fieldRefusal(c.request)
        #expect(error?.code == .badRequest)
        #expect(error?.reason.contains(c.reason) == true, "reason was: \(error?.reason ?? "none")")
    }

    @Test func theReasonNamesTheField() {
        let error = fieldRefusal(#"{"value":1.5,"type":"INT64"}"#, name: "width")
        #expect(error?.reason == "field 'width': INT64 must be a whole number within 64 bits")
        #expect(error?.description == "BAD_REQUEST: field 'width': INT64 must be a whole number within 64 bits")
    }

    @Test func validBoundaryLocationsAreAccepted() throws {
        for (lat, lon) in [(90.0, 180.0), (-90.0, -180.0), (0.0, 0.0)] {
            #expect(try decodeField(#"{"value":{"latitude":\#(lat),"longitude":\#(lon)},"type":"LOCATION"}"#)
                    == .location(Location(latitude: lat, longitude: lon)))
        }
    }
}
