import TandemCore

/// Component schemas of `/openapi.json`: the CloudKit Web Services dictionaries (Types page).
enum OpenAPISchemas {
    static func object(_ properties: JSONObject, required: [String] = []) -> JSONValue {
        var o: JSONObject = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { o["required"] = .array(required.map(JSONValue.string)) }
        return .object(o)
    }

    static func ref(_ name: String) -> JSONValue { OpenAPIDocument.ref(name) }
    static func array(_ items: JSONValue) -> JSONValue { ["type": "array", "items": items] }
    static let string: JSONValue = ["type": "string"]
    static let integer: JSONValue = ["type": "integer", "format": "int64"]
    static let boolean: JSONValue = ["type": "boolean"]
    static let number: JSONValue = ["type": "number"]

    static var all: JSONValue {
        var merged = records.objectValue ?? JSONObject()
        for entry in sharing.entries + sync.entries + identity.entries + sharedWithYou.entries { merged[entry.key] = entry.value }
        return .object(merged)
    }

    static var records: JSONValue {
        let fieldTypes: [JSONValue] = FieldType.ScalarType.allCases.flatMap { [.string($0.rawValue), .string($0.rawValue + "_LIST")] }
            + ["ASSET", "ASSET_LIST", "LIST"]
        return [
            "Error": object([
                "uuid": string, "serverErrorCode": ["type": "string", "enum": .array(ServerErrorCode.allCases.map { .string($0.rawValue) })],
                "reason": string, "retryAfter": integer, "redirectURL": string, "recordName": string, "zoneID": ref("ZoneID"),
                "serverRecord": ref("Record"), "tandemReason": ["type": "string", "enum": ["SESSION_EXPIRED", "SESSION_REVOKED", "CONSENT_REQUIRED"]],
            ], required: ["uuid", "serverErrorCode", "reason"]),
            "ZoneID": object(["zoneName": string, "ownerRecordName": string, "zoneType": string], required: ["zoneName"]),
            "Zone": object(["zoneID": ref("ZoneID"), "syncToken": string, "atomic": boolean, "deleted": boolean,
                            "share": object(["recordName": string, "zoneID": ref("ZoneID")])]),
            "Field": object(["value": [:], "type": ["type": "string", "enum": .array(fieldTypes)]], required: ["value"]),
            "Reference": object(["recordName": string, "zoneID": ref("ZoneID"),
                                 "action": ["type": "string", "enum": ["NONE", "DELETE_SELF", "VALIDATE"]]], required: ["recordName"]),
            "Location": object(["latitude": number, "longitude": number, "horizontalAccuracy": number, "verticalAccuracy": number,
                                "altitude": number, "speed": number, "course": number, "timestamp": integer], required: ["latitude", "longitude"]),
            "Asset": object(["fileChecksum": string, "size": integer, "referenceChecksum": string, "wrappingKey": string,
                             "receipt": string, "downloadURL": string]),
            "Stamp": object(["timestamp": integer, "userRecordName": string, "deviceID": string]),
            "Record": object([
                "recordName": string, "recordType": string, "recordChangeTag": string,
                "fields": ["type": "object", "additionalProperties": ref("Field")],
                "created": ref("Stamp"), "modified": ref("Stamp"), "deleted": boolean, "zoneID": ref("ZoneID"),
                "parent": object(["recordName": string]), "share": object(["recordName": string, "zoneID": ref("ZoneID")]),
                // cloudkit.share records only:
                "shortGUID": string, "url": string, "stableUrl": object(["shortGUID": string, "displayedHostname": string]),
                "publicPermission": ["type": "string", "enum": ["NONE", "READ_ONLY", "READ_WRITE"]],
                "participants": array(ref("ShareParticipant")), "owner": ref("ShareParticipant"),
                "currentUserParticipant": ref("ShareParticipant"), "allowsAccessRequests": boolean,
                "allowedSharingOptions": object([
                    "allowedParticipantPermissionOptions": ["type": "string", "enum": ["ANY", "READ_ONLY", "READ_WRITE"]],
                    "allowedParticipantAccessOptions": ["type": "string", "enum": ["ANY", "ANYONE_WITH_LINK", "SPECIFIED_RECIPIENTS_ONLY"]],
                ]),
                "requesters": array(ref("UserIdentity")), "blockedIdentities": array(ref("UserIdentity")),
                "forRecord": object(["recordName": string]),
            ], required: ["recordName"]),
            "RecordOrError": ["oneOf": [ref("Record"), ref("Error")]],
            "RecordsResponse": object(["records": array(ref("RecordOrError"))]),
            "RecordsModifyRequest": object([
                "operations": ["type": "array", "maxItems": 200, "items": object([
                    "operationType": ["type": "string", "enum": .array(RecordOperationKinds.names)],
                    "record": ref("Record"), "desiredKeys": array(string),
                ], required: ["operationType", "record"])],
                "zoneID": ref("ZoneID"), "atomic": boolean, "desiredKeys": array(string), "numbersAsStrings": boolean,
            ], required: ["operations"]),
            "RecordsLookupRequest": object([
                "records": array(object(["recordName": string, "desiredKeys": array(string)], required: ["recordName"])),
                "zoneID": ref("ZoneID"), "desiredKeys": array(string), "numbersAsStrings": boolean,
            ], required: ["records"]),
            "Filter": object([
                "comparator": ["type": "string", "enum": .array(Comparator.allCases.map { .string($0.rawValue) })],
                "fieldName": string, "systemFieldName": ["type": "string", "enum": .array(SystemField.allCases.map { .string($0.rawValue) })],
                "fieldValue": ref("Field"), "distance": number,
            ], required: ["comparator", "fieldValue"]),
            "Sort": object(["fieldName": string, "systemFieldName": string, "ascending": boolean, "relativeLocation": ref("Location")]),
            "Query": object(["recordType": string, "filterBy": array(ref("Filter")), "sortBy": array(ref("Sort"))], required: ["recordType"]),
            "RecordsQueryRequest": object([
                "query": ref("Query"), "zoneID": ref("ZoneID"), "zoneWide": boolean,
                "resultsLimit": ["type": "integer", "minimum": 1, "maximum": 200], "continuationMarker": string,
                "desiredKeys": array(string), "numbersAsStrings": boolean,
            ], required: ["query"]),
            "RecordsQueryResponse": object(["records": array(ref("Record")), "continuationMarker": string]),
            "ZonesResponse": object(["zones": array(["oneOf": [ref("Zone"), ref("Error")]])]),
            "ZonesLookupRequest": object(["zones": array(ref("ZoneID"))], required: ["zones"]),
            "ZonesModifyRequest": object(["operations": array(object([
                "operationType": ["type": "string", "enum": ["create", "delete"]], "zone": object(["zoneID": ref("ZoneID")]),
            ], required: ["operationType", "zone"]))], required: ["operations"]),
            "AssetsUploadRequest": object(["zoneID": ref("ZoneID"), "tokens": array(object([
                "recordName": string, "recordType": string, "fieldName": string,
            ], required: ["recordType", "fieldName"]))], required: ["tokens"]),
            "AssetsUploadResponse": object(["tokens": array(object(["recordName": string, "recordType": string, "fieldName": string, "url": string]))]),
            "AssetUploadReceipt": object(["singleFile": ref("Asset")]),
            "AssetsRereferenceRequest": object(["zoneID": ref("ZoneID"), "targetZoneID": ref("ZoneID"), "assets": array(object([
                "recordName": string, "fieldName": string, "fileChecksum": string,
            ], required: ["recordName", "fieldName"]))], required: ["assets"]),
            "AssetsRereferenceResponse": object(["assets": array(object([
                "recordName": string, "fieldName": string, "fileChecksum": string, "size": integer, "receipt": string,
                "serverErrorCode": string, "reason": string,
            ]))]),
            "User": object(["userRecordName": string, "firstName": string, "lastName": string, "avatarURL": string]),
            "UserIdentities": object(["users": array(object([
                "userRecordName": string, "nameComponents": object(["givenName": string, "familyName": string]),
                "lookupInfo": object(["emailAddress": string, "phoneNumber": string, "userRecordName": string]),
                "avatarURL": string,
            ]))]),
        ]
    }
}

enum RecordOperationKinds {
    static var names: [JSONValue] { RecordOperation.Kind.allCases.map { .string($0.rawValue) } }
}
