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
            "Subscription": object([
                "subscriptionID": string, "subscriptionType": ["type": "string", "enum": ["query", "zone", "database"]],
                "zoneID": ref("ZoneID"), "query": ref("Query"), "firesOn": array(["type": "string", "enum": ["create", "update", "delete"]]),
                "firesOnce": boolean, "zoneWide": boolean, "notificationInfo": ["type": "object"], "webhookURL": string,
                "webhookSecret": string,
            ], required: ["subscriptionType"]),
            "SubscriptionsResponse": object(["subscriptions": array(["oneOf": [ref("Subscription"), ref("Error")]])]),
            "SubscriptionsLookupRequest": object(["subscriptions": array(object(["subscriptionID": string], required: ["subscriptionID"]))],
                                                 required: ["subscriptions"]),
            "SubscriptionsModifyRequest": object(["operations": array(object([
                "operationType": ["type": "string", "enum": ["create", "update", "delete"]], "subscription": ref("Subscription"),
            ], required: ["operationType", "subscription"]))], required: ["operations"]),
            "TokensCreateRequest": object(["apnsEnvironment": ["type": "string", "enum": ["development", "production"]]], required: ["apnsEnvironment"]),
            "TokensCreateResponse": object(["apnsEnvironment": string, "apnsToken": string, "webcourierURL": string]),
            "TokensRegisterRequest": object(["apnsEnvironment": string, "apnsToken": string], required: ["apnsEnvironment", "apnsToken"]),
            "TokensRegisterResponse": object(["apnsEnvironment": string, "apnsToken": string, "webcourierURL": string]),
        ]
    }
}
