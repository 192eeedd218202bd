import Foundation
import Testing
import TandemCore

/// `zones/changes` as CloudKit JS's `fetchDatabaseChanges` sends it in the private database:
/// `{metaSyncToken?, resultsLimit?}` → `{zones, metaSyncToken, moreComing}`; a deleted zone is
/// `{zoneID, deleted: true}` (decisions J11).
@Suite("CloudKit JS: zones/changes")
struct ZonesChangesTests {
    func changes(_ server: TestServer, _ person: Person, token: String?, limit: Int?) throws -> (zones: [JSONValue], token: String, more: Bool) {
        var body: JSONObject = [:]
        if let token { body["metaSyncToken"] = .string(token) }
        if let limit { body["resultsLimit"] = .int(Int64(limit)) }
        let response = try server.post("zones/changes", .object(body), as: person, database: "private")
        guard response.status == 200, let next = response.json["metaSyncToken"]?.stringValue, let more = response.json["moreComing"]?.boolValue else {
            throw TestFailure("zones/changes: \(response.status) \(response.text)")
        }
        return (response.json["zones"]?.arrayValue ?? [], next, more)
    }

    func modifyZone(_ server: TestServer, _ person: Person, _ operation: String, _ name: String) throws {
        let response = try server.post("zones/modify", ["operations": [["operationType": .string(operation), "zone": ["zoneID": ["zoneName": .string(name)]]]]],
                                       as: person, database: "private")
        guard response.status == 200 else { throw TestFailure("zones/modify \(operation): \(response.text)") }
    }

    @Test("the first call pages by resultsLimit too; the last page's token brings later creations and deletions")
    func firstCallPagesThenDelta() throws {
        let server = try Shared.server
        let person = try server.person("zones-changes")
        let names = (0..<3).map { _ in unique("zc") }
        for name in names { try modifyZone(server, person, "create", name) }
        try modifyZone(server, person, "delete", names[1])

        var seen: [String] = []
        var token: String?
        var pages = 0
        repeat {
            let page = try changes(server, person, token: token, limit: 1)
            #expect(page.zones.count <= 1, "resultsLimit 1 gave \(page.zones.count) zones")
            seen += page.zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue }
            #expect(page.zones.allSatisfy { $0["deleted"] == nil }, "a first listing holds only zones that exist")
            token = page.token
            pages += 1
            if !page.more { break }
        } while pages < 10
        #expect(Set(seen) == [names[0], names[2]] && seen.count == 2, "\(seen)")
        #expect(pages == 2, "\(pages) pages")

        let added = unique("zc")
        try modifyZone(server, person, "create", added)
        try modifyZone(server, person, "delete", names[2])
        let delta = try changes(server, person, token: token, limit: nil)
        #expect(!delta.more)
        let deleted = delta.zones.first { $0["zoneID"]?["zoneName"]?.stringValue == names[2] }
        #expect(deleted?["deleted"] == true, "\(delta.zones)")
        #expect(delta.zones.contains { $0["zoneID"]?["zoneName"]?.stringValue == added && $0["deleted"] == nil }, "\(delta.zones)")
        #expect(!delta.zones.contains { $0["zoneID"]?["zoneName"]?.stringValue == names[0] }, "unchanged zones are not repeated")
        // Nothing new: an empty answer, the same position.
        let idle = try changes(server, person, token: delta.token, limit: 5)
        #expect(idle.zones.isEmpty && !idle.more)
    }

    @Test("a first call within resultsLimit answers every zone at once, with moreComing false")
    func firstCallWithinLimit() throws {
        let server = try Shared.server
        let person = try server.person("zones-changes-all")
        let names = (0..<2).map { _ in unique("zc") }
        for name in names { try modifyZone(server, person, "create", name) }
        let page = try changes(server, person, token: nil, limit: 2)
        #expect(!page.more && Set(page.zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue }) == Set(names), "\(page.zones)")
        let forged = try server.post("zones/changes", ["metaSyncToken": "not-a-token"], as: person, database: "private")
        #expect(forged.status == 400 && forged.json.serverErrorCode == "BAD_REQUEST", "\(forged.text)")
    }
}
