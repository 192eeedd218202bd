import Foundation
import Testing
import TandemCore

/// The long poll as CloudKit JS 2.6.4 reads it. Its APNs connector fetches the `webcourierURL`,
/// reads the body as JSON and hands it to `parseRawNotification`, which looks at `body.ck`:
/// `ck.fet` makes a `RecordZoneNotification` (`zid`, `zoid`, `sid`), `ck.qry` a
/// `QueryNotification` (`zid`, `zoid`, `sid`, `dbs`, `rid`, `fo`, optional `af`); `ck.nid` and
/// `ck.cid` are the notification and container IDs, `aps` the alert. One response is one
/// notification; then it polls again after 10 ms. A body that is not JSON (204 No Content) is
/// never handed to listeners.
@Suite("CloudKit JS: long-poll notifications")
struct CloudKitJSLongPollTests {
    /// Polls the CloudKit JS way (no parameters but a short timeout) until a 200 arrives or
    /// `seconds` pass; returns that response, or the last 204.
    func poll(_ server: TestServer, _ courier: String, seconds: Double = 5) throws -> TestServer.Response {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let wait = max(0.05, min(1, deadline.timeIntervalSinceNow))
            let response = try server.request("GET", courier + "?timeout=\(wait)", token: .some(nil))
            if response.status != 204 || Date() >= deadline { return response }
        }
    }

    func zone(_ server: TestServer, _ person: Person) throws -> String {
        let name = unique("ckjs")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(name)]]]]],
                            as: person, database: "private")
        return name
    }

    @Test("a zone subscription's notification is ck.fet {zid, zoid, sid, dbs} with ck.nid, ck.cid and aps from notificationInfo")
    func zoneNotificationShape() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-zone")
        let zone = try zone(server, person)
        let courier = try server.webcourier(as: person)
        _ = try server.subscribe(["subscriptionID": "zone-sub", "subscriptionType": "zone", "zoneID": ["zoneName": .string(zone)],
                                  "notificationInfo": ["alertBody": "Changed", "soundName": "ping.aiff", "shouldBadge": true,
                                                       "shouldSendContentAvailable": true]], as: person)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "r1", recordType: "Item", fields: ["n": Body.field(1)])],
                                                          zone: zone), as: person, database: "private")
        let response = try poll(server, courier)
        #expect(response.status == 200, "\(response.status) \(response.text)")
        let ck = response.json["ck"]
        #expect(ck?["nid"]?.stringValue?.isEmpty == false)
        #expect(ck?["cid"]?.stringValue == TestServer.container)
        #expect(ck?["qry"] == nil)
        let fet = ck?["fet"]
        #expect(fet?["zid"]?.stringValue == zone)
        #expect(fet?["zoid"]?.stringValue == person.recordName)
        #expect(fet?["sid"] == "zone-sub")
        #expect(fet?["dbs"] == 1)
        let aps = response.json["aps"]
        #expect(aps?["alert"]?["body"] == "Changed")
        #expect(aps?["sound"] == "ping.aiff")
        #expect(aps?["badge"] == 1)
        #expect(aps?["content-available"] == 1)
        #expect(response.json["notifications"] == nil)
    }

    @Test("a database subscription's notification is ck.fet with sid and dbs (1 private, 2 shared)")
    func databaseNotificationScopes() throws {
        let server = try Shared.server
        let owner = try server.person("ckjs-db-owner")
        let reader = try server.person("ckjs-db-reader")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(reader)])
        try server.accept(note, as: reader)
        let ownerCourier = try server.webcourier(as: owner)
        let readerCourier = try server.webcourier(as: reader)
        _ = try server.subscribe(["subscriptionID": "mine", "subscriptionType": "database"], as: owner)
        _ = try server.subscribe(["subscriptionID": "theirs", "subscriptionType": "database"], as: reader, database: "shared")
        _ = try server.ownerModify(note, [Body.operation("create", name: "shared-1", fields: [:], extra: ["parent": ["recordName": "note"]])])
        let mine = try poll(server, ownerCourier).json["ck"]?["fet"]
        #expect(mine?["sid"] == "mine")
        #expect(mine?["dbs"] == 1)
        #expect(mine?["zid"]?.stringValue == note.zone)
        let theirs = try poll(server, readerCourier).json["ck"]?["fet"]
        #expect(theirs?["sid"] == "theirs")
        #expect(theirs?["dbs"] == 2)
        #expect(theirs?["zoid"]?.stringValue == owner.recordName)
    }

    @Test("a query subscription's notifications are ck.qry {zid, zoid, sid, dbs, rid, fo}: fo 1 created, 2 updated, 3 deleted, one per response")
    func queryNotificationShape() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-query")
        let zone = try zone(server, person)
        let courier = try server.webcourier(as: person)
        _ = try server.subscribe(["subscriptionID": "items", "subscriptionType": "query", "zoneID": ["zoneName": .string(zone)],
                                  "query": ["recordType": "Item"], "firesOn": ["create", "update", "delete"]], as: person)
        let created = try server.post("records/modify", Body.modify([Body.operation("create", name: "q1", recordType: "Item", fields: ["n": Body.field(1)])],
                                                                    zone: zone), as: person, database: "private").json
        let first = try poll(server, courier)
        let updated = try server.post("records/modify", Body.modify([Body.operation("update", name: "q1", recordType: "Item",
                                                                                    tag: created.record(0)["recordChangeTag"]?.stringValue,
                                                                                    fields: ["n": Body.field(2)])], zone: zone),
                                      as: person, database: "private").json
        let second = try poll(server, courier)
        _ = try server.post("records/modify", Body.modify([Body.operation("delete", name: "q1", recordType: nil,
                                                                          tag: updated.record(0)["recordChangeTag"]?.stringValue)], zone: zone),
                            as: person, database: "private")
        let third = try poll(server, courier)
        var reasons: [JSONValue?] = []
        for response in [first, second, third] {
            #expect(response.status == 200, "\(response.text)")
            let qry = response.json["ck"]?["qry"]
            #expect(response.json["ck"]?["fet"] == nil)
            #expect(qry?["zid"]?.stringValue == zone)
            #expect(qry?["zoid"]?.stringValue == person.recordName)
            #expect(qry?["sid"] == "items")
            #expect(qry?["dbs"] == 1)
            #expect(qry?["rid"] == "q1")
            #expect(response.json["aps"] != nil)
            reasons.append(qry?["fo"])
        }
        #expect(reasons == [1, 2, 3])
    }

    @Test("ck.qry.af holds the record's values of the fields notificationInfo.additionalFields names, and no others")
    func queryNotificationAdditionalFields() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-af")
        let zone = try zone(server, person)
        let courier = try server.webcourier(as: person)
        _ = try server.subscribe(["subscriptionID": "with-fields", "subscriptionType": "query", "zoneID": ["zoneName": .string(zone)],
                                  "query": ["recordType": "Item"], "firesOn": ["create"],
                                  "notificationInfo": ["additionalFields": ["title", "n", "missing"]]], as: person)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "f1", recordType: "Item",
                                                                          fields: ["title": Body.field("Hello"), "n": Body.field(5),
                                                                                   "secret": Body.field("s3cret")])], zone: zone),
                            as: person, database: "private")
        let response = try poll(server, courier)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["ck"]?["qry"]?["af"] == ["title": "Hello", "n": 5], "\(response.text)")
        #expect(!response.text.contains("s3cret"))
    }

    @Test("queued notifications drain one per response, oldest first; then an idle poll answers 204 with no body")
    func queuedDrainOnePerResponse() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-queue")
        let zone = try zone(server, person)
        let courier = try server.webcourier(as: person)
        _ = try server.subscribe(["subscriptionID": "q", "subscriptionType": "query", "zoneID": ["zoneName": .string(zone)],
                                  "query": ["recordType": "Item"], "firesOn": ["create"]], as: person)
        for name in ["a", "b", "c"] {
            _ = try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: "Item", fields: [:])], zone: zone),
                                as: person, database: "private")
        }
        // Let all three queue before the first poll.
        let deadline = Date().addingTimeInterval(5)
        var names: [String] = []
        var ids = Set<String>()
        while names.count < 3 && Date() < deadline {
            Thread.sleep(forTimeInterval: names.isEmpty ? 0.5 : 0)
            let response = try poll(server, courier)
            guard response.status == 200 else { continue }
            #expect(response.json["notifications"] == nil)
            names.append(response.json["ck"]?["qry"]?["rid"]?.stringValue ?? "?")
            ids.insert(response.json["ck"]?["nid"]?.stringValue ?? "")
        }
        #expect(names == ["a", "b", "c"])
        #expect(ids.count == 3)
        let idle = try server.request("GET", courier + "?timeout=0.2", token: .some(nil))
        #expect(idle.status == 204)
        #expect(idle.body.isEmpty)
    }

    @Test("format=tandem keeps Tandem's batch ({notifications: [...]}, 200 even when empty); an unknown format is refused")
    func tandemFormatNegotiated() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-format")
        let courier = try server.webcourier(as: person)
        let idle = try server.request("GET", courier + "?format=tandem&timeout=0", token: .some(nil))
        #expect(idle.status == 200)
        #expect(idle.json["notifications"] == [])
        let bad = try server.request("GET", courier + "?format=apns2", token: .some(nil))
        #expect(bad.status == 400)
        #expect(bad.json.serverErrorCode == "BAD_REQUEST")
        let unknown = try server.request("GET", server.baseURL + "/webcourier/1/" + String(repeating: "0", count: 64) + "?timeout=0", token: .some(nil))
        #expect(unknown.status == 404)
        #expect(unknown.json.serverErrorCode == "NOT_FOUND")
    }
}
