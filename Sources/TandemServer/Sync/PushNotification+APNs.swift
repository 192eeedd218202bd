import TandemCore

/// The APNs-style payload CloudKit JS parses from each `webcourierURL` response (its
/// `parseRawNotification`): `ck` carries the CloudKit part, `aps` the alert.
///
/// - `ck.nid` notification ID, `ck.cid` container identifier.
/// - Zone and database subscriptions: `ck.fet` = `{zid, zoid, sid, dbs}` (zone name, zone owner's
///   record name, subscription ID, database scope); CloudKit JS makes a `RecordZoneNotification`.
/// - Query subscriptions: `ck.qry` = `{zid, zoid, sid, dbs, rid, fo}` plus `af`, the record's
///   values of the fields named in `notificationInfo.additionalFields` (CloudKit JS's
///   `recordFields`); CloudKit JS makes a `QueryNotification`.
/// - `dbs`: 0 public, 1 private, 2 shared. `fo`: 1 created, 2 updated, 3 deleted.
/// - `aps` from the subscription's `notificationInfo`: `alert.body`, `alert.loc-key`,
///   `alert.loc-args`, `alert.action-loc-key`, `alert.launch-image`, `sound`, `badge` (1 when
///   `shouldBadge`), `content-available` (1 when `shouldSendContentAvailable`), `category`.
extension PushNotification {
    var apnsPayload: JSONValue {
        var part: JSONObject = ["sid": .string(subscriptionID), "dbs": .int(Self.scopeNumber(databaseScope))]
        if let zoneID {
            part["zid"] = .string(zoneID.zoneName)
            if let owner = zoneID.ownerRecordName { part["zoid"] = .string(owner) }
        }
        var ck: JSONObject = ["nid": .string(notificationID), "cid": .string(container)]
        if kind == "query" {
            if let recordName { part["rid"] = .string(recordName) }
            if let reason = queryReason.flatMap(Self.reasonNumber) { part["fo"] = .int(reason) }
            if let fields { part["af"] = .object(fields) }
            ck["qry"] = .object(part)
        } else {
            ck["fet"] = .object(part)
        }
        return .object(["ck": .object(ck), "aps": .object(aps)])
    }

    /// CloudKit JS's `DatabaseScope` numbers as the payload's `dbs` carries them.
    static func scopeNumber(_ scope: String) -> Int64 {
        switch scope {
        case "PUBLIC": 0
        case "SHARED": 2
        default: 1
        }
    }

    static func reasonNumber(_ reason: String) -> Int64? {
        switch reason {
        case "recordCreated": 1
        case "recordUpdated": 2
        case "recordDeleted": 3
        default: nil
        }
    }

    /// The `aps` dictionary from `notificationInfo` (CloudKit Web Services' notification info
    /// keys mapped to APNs' payload keys).
    var aps: JSONObject {
        guard let info = notificationInfo else { return [:] }
        var alert = JSONObject()
        for (from, to) in [("alertBody", "body"), ("alertLocalizationKey", "loc-key"), ("alertLocalizationArgs", "loc-args"),
                           ("alertActionLocalizationKey", "action-loc-key"), ("alertLaunchImage", "launch-image")] {
            if let value = info[from], !value.isNull { alert[to] = value }
        }
        var aps = JSONObject()
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let sound = info["soundName"], !sound.isNull { aps["sound"] = sound }
        if info["shouldBadge"] == true { aps["badge"] = .int(1) }
        if info["shouldSendContentAvailable"] == true { aps["content-available"] = .int(1) }
        if let category = info["category"], !category.isNull { aps["category"] = category }
        return aps
    }

    /// The most JSON `af` may hold: an APNs payload is at most 4 KiB, and the alert and IDs
    /// need room. Fields that would pass it are left out (in the order they were named).
    static let fieldBytes = 2048

    /// `notificationInfo.additionalFields`: the field names a query notification carries.
    static func additionalFields(_ info: JSONObject?) -> [String] {
        info?["additionalFields"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The values of `names` in `record` (those it has), within `fieldBytes`.
    static func fieldValues(_ record: Record, _ names: [String]) -> JSONObject? {
        var values = JSONObject()
        var bytes = 2
        for name in names.uniqued() {
            guard let field = record.fields[name] else { continue }
            let value = FieldCodec.encodeValue(field)
            let size = JSONWriter.bytes(value).count + name.utf8.count + 4
            guard bytes + size <= fieldBytes else { continue }
            bytes += size
            values[name] = value
        }
        return values.isEmpty ? nil : values
    }
}
