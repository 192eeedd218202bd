/// Renders errors as CloudKit error dictionaries.
///
/// CloudKit Web Services: "Error Codes" and the record/zone fetch error dictionaries:
/// `uuid`, `serverErrorCode`, `reason`, and when set `retryAfter`, `redirectURL`,
/// `recordName`, `zoneID`, plus Tandem's `serverRecord` on conflicts (decisions D2) and
/// `tandemReason` on refused sessions (decisions A12).
public enum ErrorCodec {
    public static func encode(_ error: CloudKitError, uuid: String,
                              recordOptions: RecordCodec.EncodingOptions = RecordCodec.EncodingOptions()) -> JSONValue {
        var o = JSONObject()
        if let name = error.recordName { o["recordName"] = .string(name) }
        if let zoneID = error.zoneID { o["zoneID"] = RecordCodec.encodeZoneID(zoneID) }
        o["uuid"] = .string(uuid)
        o["serverErrorCode"] = .string(error.code.rawValue)
        o["reason"] = .string(error.reason)
        if let retry = error.retryAfter { o["retryAfter"] = .int(Int64(retry)) }
        if let url = error.redirectURL { o["redirectURL"] = .string(url) }
        if let sub = error.tandemReason { o["tandemReason"] = .string(sub) }
        if let record = error.serverRecord { o["serverRecord"] = RecordCodec.encodeRecord(record, options: recordOptions) }
        return .object(o)
    }
}
