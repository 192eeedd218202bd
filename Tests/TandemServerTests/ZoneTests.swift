import Foundation
import Testing
import TandemCore

/// zones/list, zones/lookup and zones/modify (CloudKit Web Services).
@Suite struct ZoneTests {
    @Test func defaultZoneAlwaysExistsAndCannotBeDeleted() throws {
        let server = try Shared.server
        let list = try server.get("zones/list")
        #expect(list.status == 200)
        let names = list.json["zones"]?.arrayValue?.compactMap { $0["zoneID"]?["zoneName"]?.stringValue } ?? []
        #expect(names.contains("_defaultZone"))
        let delete = try server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": "_defaultZone"]]]]])
        #expect(delete.json["zones"]?.arrayValue?.first?.serverErrorCode == "BAD_REQUEST")
    }

    @Test func createLookupAndDeleteAZone() throws {
        let server = try Shared.server
        let name = unique("z")
        let created = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(name)]]]]])
        let zone = created.json["zones"]?.arrayValue?.first
        #expect(zone?["zoneID"]?["zoneName"]?.stringValue == name)
        #expect(zone?["zoneID"]?["ownerRecordName"]?.stringValue == server.userRecordName)
        #expect(zone?["syncToken"]?.stringValue != nil)
        #expect(zone?["atomic"] == true)
        try server.create("r", fields: [:], zone: name)
        let lookup = try server.post("zones/lookup", ["zones": [["zoneName": .string(name)], ["zoneName": "missing-zone"]]])
        let zones = lookup.json["zones"]?.arrayValue ?? []
        #expect(zones.first?["zoneID"]?["zoneName"]?.stringValue == name)
        #expect(zones.first?["syncToken"] != zone?["syncToken"])
        #expect(zones.last?.serverErrorCode == "ZONE_NOT_FOUND")
        let deleted = try server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": .string(name)]]]]])
        #expect(deleted.json["zones"]?.arrayValue?.first?["deleted"] == true)
        let after = try server.post("records/lookup", Body.lookup(["r"], zone: name))
        #expect(after.status == 404)
        #expect(after.json.serverErrorCode == "ZONE_NOT_FOUND")
    }

    @Test func deletingAMissingZoneIsZoneNotFound() throws {
        let server = try Shared.server
        let response = try server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": .string(unique("gone"))]]]]])
        #expect(response.json["zones"]?.arrayValue?.first?.serverErrorCode == "ZONE_NOT_FOUND")
    }

    @Test func zoneNamesFollowTheRules() throws {
        let server = try Shared.server
        let response = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "tab\there"]]]]])
        #expect(response.status == 400)
    }
}
