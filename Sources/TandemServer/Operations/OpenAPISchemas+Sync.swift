import TandemCore

/// Component schemas for change feeds (CloudKit Web Services: changes/database, changes/zone,
/// records/changes, zones/changes).
extension OpenAPISchemas {
    static var sync: JSONObject {
        let zoneChange = object(["zoneID": ref("ZoneID"), "deleted": boolean,
                                 "reason": ["type": "string", "enum": ["DELETED", "PURGED", "ACCESS_LOST"]]])
        let zoneEntry = object(["zoneID": ref("ZoneID"), "syncToken": string, "resultsLimit": integer, "desiredKeys": array(string),
                                "desiredRecordTypes": array(string)], required: ["zoneID"])
        let zoneResult = object(["zoneID": ref("ZoneID"), "syncToken": string, "moreComing": boolean, "records": array(ref("Record"))])
        return [
            "DatabaseChangesRequest": object(["syncToken": string, "resultsLimit": integer]),
            "DatabaseChangesResponse": object(["zones": array(zoneChange), "syncToken": string, "moreComing": boolean]),
            "ZonesChangesRequest": object(["metaSyncToken": string, "resultsLimit": integer]),
            "ZonesChangesResponse": object(["zones": array(zoneChange), "metaSyncToken": string, "moreComing": boolean]),
            "ZoneChangesRequest": object(["zones": array(zoneEntry), "resultsLimit": integer, "desiredKeys": array(string),
                                          "desiredRecordTypes": array(string), "numbersAsStrings": boolean], required: ["zones"]),
            "ZoneChangesResponse": object(["zones": array(["oneOf": [zoneResult, ref("Error")]])]),
            "RecordsChangesRequest": object(["zoneID": ref("ZoneID"), "syncToken": string, "resultsLimit": integer,
                                             "desiredKeys": array(string)], required: ["zoneID"]),
            "RecordsChangesResponse": object(["records": array(ref("Record")), "syncToken": string, "moreComing": boolean, "reverse": boolean]),
        ]
    }
}
