import Foundation
import Testing
import TandemCore

/// changes/zone and changes/database in the private database: catch-up from any token equals
/// the server's state; tokens are checked.
@Suite("Change feeds")
struct ChangeFeedTests {
    @Test("catch-up: 5,000 mixed writes in 3 zones, fetched from no token and from tokens taken at random points")
    func catchUp() throws {
        let server = try Shared.server
        let owner = try server.person("feeder")
        let zones = (0..<3).map { _ in unique("feed") }
        for zone in zones {
            _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                as: owner, database: "private")
        }
        var generator = SystemRandomNumberGenerator()
        var live: [String: [String: String]] = Dictionary(uniqueKeysWithValues: zones.map { ($0, [:]) })  // zone → name → tag
        var mirrors: [String: [ZoneMirror]] = Dictionary(uniqueKeysWithValues: zones.map { ($0, []) })
        var written = 0
        var counter = 0
        while written < 5000 {
            let zone = zones[Int.random(in: 0..<3, using: &generator)]
            var operations: [JSONValue] = []
            var touched = Set<String>()
            for _ in 0..<Int.random(in: 20...120, using: &generator) {
                let existing = live[zone]!.filter { !touched.contains($0.key) }
                let roll = Int.random(in: 0..<10, using: &generator)
                if roll < 5 || existing.isEmpty {
                    counter += 1
                    let name = "item-\(counter)"
                    touched.insert(name)
                    operations.append(Body.operation("create", name: name, recordType: "Item", fields: ["n": Body.field(.int(Int64(counter)))]))
                } else if let (name, tag) = existing.randomElement(using: &generator) {
                    touched.insert(name)
                    if roll < 8 {
                        operations.append(Body.operation("update", name: name, recordType: nil, tag: tag,
                                                         fields: ["n": Body.field(.int(Int64(Int.random(in: 0...1_000_000, using: &generator))))]))
                    } else {
                        operations.append(Body.operation("delete", name: name, recordType: nil, tag: tag))
                    }
                }
            }
            let response = try server.post("records/modify", Body.modify(operations, zone: zone), as: owner, database: "private")
            for record in response.json.records {
                let name = record["recordName"]!.stringValue!
                #expect(record.serverErrorCode == nil)
                if record["deleted"] == true { live[zone]![name] = nil } else { live[zone]![name] = record["recordChangeTag"]?.stringValue }
            }
            written += operations.count
            // Now and then a client takes a token at this point.
            if Int.random(in: 0..<4, using: &generator) == 0 {
                var mirror = ZoneMirror()
                try mirror.catchUp(server, zoneID: ["zoneName": .string(zone)], as: owner)
                mirrors[zone]!.append(mirror)
            }
        }
        for zone in zones {
            let zoneID: JSONValue = ["zoneName": .string(zone)]
            let truth = try server.currentState(zone: zoneID, as: owner)
            var fresh = ZoneMirror()
            #expect(try fresh.catchUp(server, zoneID: zoneID, as: owner, limit: 97) == nil)
            #expect(fresh.summary == truth, "fresh listing of \(zone)")
            #expect(fresh.pages > 1)
            for var mirror in mirrors[zone]! {
                #expect(try mirror.catchUp(server, zoneID: zoneID, as: owner, limit: 50) == nil)
                #expect(mirror.summary == truth, "resumed listing of \(zone)")
            }
            // Tombstones keep their record type.
            let all = try server.post("changes/zone", ["zones": [["zoneID": zoneID, "syncToken": .string(mirrors[zone]!.first?.token ?? "")]]],
                                      as: owner, database: "private").json
            for record in all["zones"]?.arrayValue?.first?["records"]?.arrayValue ?? [] where record["deleted"] == true {
                #expect(record["recordType"] == "Item")
            }
        }
        // The database feed lists the three zones.
        let feed = try server.databaseFeed(as: owner, database: "private", token: nil)
        let names = Set(feed.zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue })
        #expect(Set(zones).isSubset(of: names))
    }

    @Test("tampered, foreign-zone and foreign-user tokens are refused with clear errors")
    func badTokens() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let other = try server.person("other")
        for zone in ["a", "b"] {
            _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                as: owner, database: "private")
        }
        var mirror = ZoneMirror()
        try mirror.catchUp(server, zoneID: ["zoneName": "a"], as: owner)
        let token = try #require(mirror.token)
        var tampered = Array(token)
        tampered[10] = tampered[10] == "A" ? "B" : "A"
        let cases: [(String, JSONValue, Person, String)] = [
            ("tampered", ["zoneName": "a"], owner, String(tampered)),
            ("another zone", ["zoneName": "b"], owner, token),
            ("garbage", ["zoneName": "a"], owner, "not-a-token"),
        ]
        for (label, zoneID, person, text) in cases {
            let response = try server.post("changes/zone", ["zones": [["zoneID": zoneID, "syncToken": .string(text)]]], as: person, database: "private")
            let zone = response.json["zones"]?.arrayValue?.first
            #expect(zone?.serverErrorCode == "BAD_REQUEST", "\(label): \(response.text)")
        }
        // Another user cannot use the owner's zone token in their own zone of the same name.
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "a"]]]]], as: other, database: "private")
        let foreign = try server.post("changes/zone", ["zones": [["zoneID": ["zoneName": "a"], "syncToken": .string(token)]]], as: other, database: "private")
        #expect(foreign.json["zones"]?.arrayValue?.first?.serverErrorCode == "BAD_REQUEST")
        // Database tokens are bound to their viewer and database.
        let feed = try server.databaseFeed(as: owner, database: "private", token: nil)
        let ownerToken = try #require(feed.token)
        #expect(try server.databaseFeed(as: other, database: "private", token: ownerToken).error == "BAD_REQUEST")
        #expect(try server.databaseFeed(as: owner, database: "shared", token: ownerToken).error == "BAD_REQUEST")
        #expect(try server.post("changes/zone", ["zones": [["zoneID": ["zoneName": "a"], "syncToken": .string(ownerToken)]]],
                                as: owner, database: "private").json["zones"]?.arrayValue?.first?.serverErrorCode == "BAD_REQUEST")
    }

    @Test("tokens older than the retained history get CHANGE_TOKEN_EXPIRED; no token still lists everything")
    func expiredTokens() throws {
        let server = try TestServer()
        try server.start(extraArguments: ["--change-retention", "1", "--quiet"])
        let owner = try server.person("owner")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "z"]]]]], as: owner, database: "private")
        let created = try server.post("records/modify", Body.modify([Body.operation("create", name: "x", recordType: "Item", fields: ["n": Body.field(1)]),
                                                                     Body.operation("create", name: "y", recordType: "Item", fields: ["n": Body.field(2)])],
                                                                    zone: "z"), as: owner, database: "private").json
        var mirror = ZoneMirror()
        try mirror.catchUp(server, zoneID: ["zoneName": "z"], as: owner)
        let database = try server.databaseFeed(as: owner, database: "private", token: nil)
        _ = try server.post("records/modify", Body.modify([Body.operation("delete", name: "x", recordType: nil, tag: created.record(0)["recordChangeTag"]?.stringValue)],
                                                         zone: "z"), as: owner, database: "private")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "gone"]]]]], as: owner, database: "private")
        _ = try server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": "gone"]]]]], as: owner, database: "private")
        // Wait for the purge (retention 1 s, purged every 0.25 s).
        var expired: String?
        for _ in 0..<40 where expired == nil {
            Thread.sleep(forTimeInterval: 0.25)
            var copy = mirror
            expired = try copy.catchUp(server, zoneID: ["zoneName": "z"], as: owner)
        }
        #expect(expired == "CHANGE_TOKEN_EXPIRED")
        var databaseExpired: String?
        for _ in 0..<40 where databaseExpired == nil {
            databaseExpired = try server.databaseFeed(as: owner, database: "private", token: database.token).error
            if databaseExpired == nil { Thread.sleep(forTimeInterval: 0.25) }
        }
        #expect(databaseExpired == "CHANGE_TOKEN_EXPIRED")
        var fresh = ZoneMirror()
        #expect(try fresh.catchUp(server, zoneID: ["zoneName": "z"], as: owner) == nil)
        #expect(Set(fresh.records.keys) == ["y"])
        let response = try server.post("changes/zone", ["zones": [["zoneID": ["zoneName": "z"], "syncToken": .string(mirror.token!)]]],
                                       as: owner, database: "private")
        #expect(response.json["zones"]?.arrayValue?.first?.serverErrorCode == "CHANGE_TOKEN_EXPIRED")
        #expect(response.status == 200)
    }

    @Test("feed records keep assets' download URLs, honour desiredKeys and numbersAsStrings, and filter by desiredRecordTypes")
    func feedEncoding() throws {
        let server = try Shared.server
        let owner = try server.person("encoder")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "enc"]]]]], as: owner, database: "private")
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]], as: owner, database: "private")
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        let receipt = try #require(try server.request("POST", url, body: Data("pixels".utf8), token: .some(nil),
                                                      headers: ["Content-Type": "application/octet-stream"]).json["singleFile"])
        _ = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "pic", recordType: "Photo", fields: ["photo": Body.field(receipt, "ASSET"), "n": Body.field(7)]),
            Body.operation("create", name: "item", recordType: "Item", fields: ["n": Body.field(8), "title": Body.field("t")]),
        ], zone: "enc"), as: owner, database: "private")
        func fetch(_ extra: JSONObject) throws -> [JSONValue] {
            var body: JSONObject = ["zones": [["zoneID": ["zoneName": "enc"]]]]
            for entry in extra.entries { body[entry.key] = entry.value }
            return try server.post("changes/zone", .object(body), as: owner, database: "private").json["zones"]?.arrayValue?.first?["records"]?.arrayValue ?? []
        }
        let plain = try fetch([:])
        let photo = try #require(plain.first { $0["recordName"] == "pic" })
        let download = try #require(photo["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue)
        #expect(try server.request("GET", download, token: .some(owner.token)).text == "pixels")
        let picked = try fetch(["desiredKeys": ["title"], "numbersAsStrings": true])
        let item = try #require(picked.first { $0["recordName"] == "item" })
        #expect(item["fields"]?["title"] != nil && item["fields"]?["n"] == nil)
        let strings = try fetch(["numbersAsStrings": true]).first { $0["recordName"] == "item" }
        #expect(strings?["fields"]?["n"]?["value"] == "8")
        let onlyItems = try fetch(["desiredRecordTypes": ["Item"]])
        #expect(onlyItems.compactMap { $0["recordName"]?.stringValue } == ["item"])
    }

    @Test("a listing without a token completes over several pages even after old deletions were purged")
    func listingAfterPurge() throws {
        let server = try TestServer()
        try server.start(extraArguments: ["--change-retention", "1", "--quiet"])
        let owner = try server.person("owner")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "z"]]]]], as: owner, database: "private")
        _ = try server.post("records/modify", Body.modify((0..<5).map { Body.operation("create", name: "r\($0)", recordType: "Item", fields: ["n": Body.field(.int(Int64($0)))]) },
                                                         zone: "z"), as: owner, database: "private")
        var before = ZoneMirror()
        try before.catchUp(server, zoneID: ["zoneName": "z"], as: owner)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "tmp", recordType: "Item", fields: [:])], zone: "z"), as: owner, database: "private")
        _ = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: "tmp", recordType: nil)], zone: "z"), as: owner, database: "private")
        // Wait until the deletion was purged (the old token expires).
        var purged = false
        for _ in 0..<40 where !purged {
            Thread.sleep(forTimeInterval: 0.25)
            var copy = before
            purged = try copy.catchUp(server, zoneID: ["zoneName": "z"], as: owner) == "CHANGE_TOKEN_EXPIRED"
        }
        #expect(purged)
        var fresh = ZoneMirror()
        #expect(try fresh.catchUp(server, zoneID: ["zoneName": "z"], as: owner, limit: 2) == nil)
        #expect(fresh.pages == 3)
        #expect(Set(fresh.records.keys) == ["r0", "r1", "r2", "r3", "r4"])
        // A record deleted while a listing is under way arrives as a deletion on a later page.
        var partial = ZoneMirror()
        let first = try server.post("changes/zone", ["zones": [["zoneID": ["zoneName": "z"]]], "resultsLimit": 2], as: owner, database: "private").json
        let zoneResult = try #require(first["zones"]?.arrayValue?.first)
        for record in zoneResult["records"]?.arrayValue ?? [] { partial.records[record["recordName"]!.stringValue!] = record }
        partial.token = zoneResult["syncToken"]?.stringValue
        _ = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: "r0", recordType: nil)], zone: "z"), as: owner, database: "private")
        #expect(try partial.catchUp(server, zoneID: ["zoneName": "z"], as: owner, limit: 2) == nil)
        #expect(Set(partial.records.keys) == ["r1", "r2", "r3", "r4"])
    }
}
