import Testing
import TandemCore

/// Numbers keep every bit: Int64 extremes, -0.0, tiny and huge doubles, and the
/// `numbersAsStrings` form in both directions (CloudKit Web Services: `numbersAsStrings`).
@Suite struct FieldCodecNumberTests {
    @Test(arguments: [Int64.min, Int64.min + 1, -1, 0, 1, 9_007_199_254_740_993, Int64.max - 1, Int64.max])
    func int64RoundTripsExactlyAsANumber(_ n: Int64) throws {
        let text = #"{"value":\#(n),"type":"INT64"}"#
        #expect(try decodeField(text) == .int64(n))
        #expect(wire(.int64(n)) == text)
    }

    @Test(arguments: [Int64.min, -1, 0, Int64.max])
    func int64RoundTripsExactlyAsAString(_ n: Int64) throws {
        let text = #"{"value":"\#(n)","type":"INT64"}"#
        #expect(try decodeField(text) == .int64(n))
        #expect(wire(.int64(n), numbersAsStrings: true) == text)
    }

    @Test(arguments: [Int64.min, 0, 1_466_108_400_000, Int64.max])
    func timestampRoundTripsExactlyBothWays(_ t: Int64) throws {
        #expect(wire(.timestamp(t)) == #"{"value":\#(t),"type":"TIMESTAMP"}"#)
        #expect(wire(.timestamp(t), numbersAsStrings: true) == #"{"value":"\#(t)","type":"TIMESTAMP"}"#)
        #expect(try decodeField(#"{"value":"\#(t)","type":"TIMESTAMP"}"#) == .timestamp(t))
        #expect(try decodeField(#"{"value":\#(t),"type":"TIMESTAMP"}"#) == .timestamp(t))
    }

    @Test(arguments: [
        (1e-300, "1e-300"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.1, "0.1"), (-2.5, "-2.5"), (123456789.125, "123456789.125"), (1e16, "1e+16"),
    ])
    func doubleRoundTripsBitForBitBothWays(_ d: Double, _ text: String) throws {
        #expect(wire(.double(d)) == #"{"value":\#(text),"type":"DOUBLE"}"#)
        #expect(wire(.double(d), numbersAsStrings: true) == #"{"value":"\#(text)","type":"DOUBLE"}"#)
        for request in [#"{"value":\#(text),"type":"DOUBLE"}"#, #"{"value":"\#(text)","type":"DOUBLE"}"#] {
            guard case .double(let back) = try decodeField(request) else { Issue.record("not a double"); continue }
            #expect(back.bitPattern == d.bitPattern, "\(request)")
        }
    }

    @Test func negativeZeroKeepsItsSignBothWays() throws {
        #expect(wire(.double(-0.0)) == #"{"value":-0.0,"type":"DOUBLE"}"#)
        #expect(wire(.double(-0.0), numbersAsStrings: true) == #"{"value":"-0.0","type":"DOUBLE"}"#)
        for request in [#"{"value":-0.0,"type":"DOUBLE"}"#, #"{"value":"-0.0","type":"DOUBLE"}"#] {
            guard case .double(let d) = try decodeField(request) else { Issue.record("not a double"); continue }
            #expect(d.sign == .minus, "\(request)")
        }
    }

    @Test func numbersAsStringsAppliesToEveryNumberInsideLists() {
        let value = FieldValue.list([.int64(1), .int64(-2)], of: .int64)
        #expect(wire(value, numbersAsStrings: true) == #"{"value":["1","-2"],"type":"INT64_LIST"}"#)
        let doubles = FieldValue.list([.double(0.5)], of: .double)
        #expect(wire(doubles, numbersAsStrings: true) == #"{"value":["0.5"],"type":"DOUBLE_LIST"}"#)
    }

    @Test func numbersAsStringsAppliesToLocationNumbers() throws {
        let location = FieldValue.location(Location(latitude: 37.5, longitude: -122.25, altitude: 10, timestamp: 1_466_108_400_000))
        let text = #"{"value":{"latitude":"37.5","longitude":"-122.25","altitude":"10.0","timestamp":"1466108400000"},"type":"LOCATION"}"#
        #expect(wire(location, numbersAsStrings: true) == text)
        #expect(try decodeField(text) == location)
    }

    @Test func numbersAsStringsLeavesStringsBytesAndReferencesAlone() {
        #expect(wire(.string("42"), numbersAsStrings: true) == #"{"value":"42","type":"STRING"}"#)
        #expect(wire(.bytes([1]), numbersAsStrings: true) == #"{"value":"AQ==","type":"BYTES"}"#)
        #expect(wire(.reference(Reference(recordName: "7")), numbersAsStrings: true)
                == #"{"value":{"recordName":"7","action":"NONE"},"type":"REFERENCE"}"#)
    }

    @Test func assetSizeMayArriveAsAString() throws {
        #expect(try decodeField(#"{"value":{"fileChecksum":"c","size":"1024"},"type":"ASSETID"}"#)
                == .asset(Asset(fileChecksum: "c", size: 1024)))
    }

    @Test func numberStringsWithoutATypeAreStrings() throws {
        // Inference cannot tell "42" the number from "42" the text; numbersAsStrings clients send `type`.
        #expect(try decodeField(#"{"value":"42"}"#) == .string("42"))
    }

    @Test func int64ListKeepsExtremesExactly() throws {
        let text = #"{"value":[-9223372036854775808,9223372036854775807],"type":"INT64_LIST"}"#
        let value = try decodeField(text)
        #expect(value == .list([.int64(Int64.min), .int64(Int64.max)], of: .int64))
        #expect(wire(value) == text)
    }
}
