import Testing
import TandemCore

/// The error dictionary: `uuid`, `serverErrorCode`, `reason`, and when set `retryAfter`,
/// `redirectURL`, `recordName`, `zoneID`, and Tandem's `serverRecord` on CONFLICT (decisions D2).
@Suite struct ErrorCodecTests {
    @Test func wholeRequestErrorHasUUIDCodeAndReason() {
        let encoded = ErrorCodec.encode(.badRequest("query needs a 'recordType' string"), uuid: "8C4E3B1A")
        #expect(JSONWriter.string(encoded) == #"{"uuid":"8C4E3B1A","serverErrorCode":"BAD_REQUEST","reason":"query needs a 'recordType' string"}"#)
    }

    @Test func recordFetchErrorNamesTheRecordAndZone() throws {
        let error = CloudKitError(.notFound, "record not found", recordName: "101", zoneID: ZoneID(zoneName: "Gallery", ownerRecordName: "_o"))
        #expect(ErrorCodec.encode(error, uuid: "u1") == (try json(#"""
            {"recordName":"101","zoneID":{"zoneName":"Gallery","ownerRecordName":"_o","zoneType":"REGULAR_CUSTOM_ZONE"},
             "uuid":"u1","serverErrorCode":"NOT_FOUND","reason":"record not found"}
            """#)))
    }

    @Test func retryAfterIsAnIntegerNumberOfSeconds() {
        var error = CloudKitError(.throttled, "slow down")
        error.retryAfter = 30
        let encoded = ErrorCodec.encode(error, uuid: "u")
        #expect(encoded["retryAfter"] == .int(30))
        #expect(encoded["serverErrorCode"] == "THROTTLED")
    }

    @Test func absentRetryAfterMeansDoNotRetry() {
        let encoded = ErrorCodec.encode(CloudKitError(.conflict, "stale tag"), uuid: "u")
        #expect(encoded.objectValue?.keys == ["uuid", "serverErrorCode", "reason"])
    }

    @Test func authenticationRequiredCarriesTheRedirectURL() {
        var error = CloudKitError(.authenticationRequired, "sign in")
        error.redirectURL = "https://idmsa.example.test/signin?x=1"
        let encoded = ErrorCodec.encode(error, uuid: "u")
        #expect(encoded["redirectURL"] == "https://idmsa.example.test/signin?x=1")
        #expect(encoded["serverErrorCode"] == "AUTHENTICATION_REQUIRED")
    }

    static var current: Record {
        Record(recordName: "101", recordType: "Artwork", recordChangeTag: "f",
               fields: ["width": .int64(20), "title": .string("Now")], zoneID: ZoneID(zoneName: "Gallery"),
               modified: Record.Stamp(timestamp: 9, userRecordName: "_other", deviceID: "D2"))
    }

    @Test func conflictCarriesTheServerRecord() throws {
        var error = CloudKitError(.conflict, "recordChangeTag 'e' is stale", recordName: "101", zoneID: ZoneID(zoneName: "Gallery"))
        error.serverRecord = Self.current
        let encoded = ErrorCodec.encode(error, uuid: "u2")
        #expect(encoded["serverErrorCode"] == "CONFLICT")
        #expect(encoded["serverRecord"] == RecordCodec.encodeRecord(Self.current))
        #expect(encoded["serverRecord"]?["recordChangeTag"] == "f")
        #expect(try RecordCodec.decodeRecord(encoded["serverRecord"] ?? .null) == Self.current)
    }

    @Test func serverRecordFollowsTheResponseOptions() {
        var error = CloudKitError(.conflict, "stale")
        error.serverRecord = Self.current
        let encoded = ErrorCodec.encode(error, uuid: "u", recordOptions: .init(desiredKeys: ["width"], numbersAsStrings: true))
        #expect(encoded["serverRecord"]?["fields"] == ["width": ["value": "20", "type": "INT64"]])
    }

    @Test func everyKeyTogether() throws {
        var error = CloudKitError(.exists, "record exists", recordName: "r", zoneID: .defaultZone)
        error.retryAfter = 0
        error.redirectURL = "https://x.test"
        error.serverRecord = Record(recordName: "r", recordType: "T")
        let encoded = ErrorCodec.encode(error, uuid: "u")
        #expect(encoded.objectValue?.keys == ["recordName", "zoneID", "uuid", "serverErrorCode", "reason", "retryAfter", "redirectURL", "serverRecord"])
        #expect(encoded["retryAfter"] == .int(0))
    }

    @Test func reasonIsWrittenEscaped() {
        let text = JSONWriter.string(ErrorCodec.encode(.badRequest("field 'a\"b': bad\n"), uuid: "u"))
        #expect(text == #"{"uuid":"u","serverErrorCode":"BAD_REQUEST","reason":"field 'a\"b': bad\n"}"#)
    }

    @Test func badRequestShorthand() {
        let error = CloudKitError.badRequest("why")
        #expect(error.code == .badRequest)
        #expect(error.reason == "why")
        #expect(error.recordName == nil && error.zoneID == nil && error.retryAfter == nil && error.redirectURL == nil)
        #expect(error.serverRecord == nil)
        #expect(error.description == "BAD_REQUEST: why")
    }
}
