import Foundation
import Synchronization
import Testing
import TandemCore
@testable import TandemServer

/// subscriptions/* and the notifications they produce (long-poll and webhook delivery).
@Suite("Subscriptions")
struct SubscriptionTests {
    @Test("create, list, look up, update and delete query, zone and database subscriptions")
    func crud() throws {
        let server = try Shared.server
        let owner = try server.person("subscriber")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "work"]]]]], as: owner, database: "private")
        let query = try server.subscribe(["subscriptionID": "big", "subscriptionType": "query",
                                          "query": ["recordType": "Item", "filterBy": [["comparator": "GREATER_THAN", "fieldName": "n", "fieldValue": ["value": 10]]]],
                                          "firesOn": ["create", "update"]], as: owner)
        #expect(query["subscriptionID"] == "big")
        #expect(query["zoneWide"] == true)
        let zone = try server.subscribe(["subscriptionType": "zone", "zoneID": ["zoneName": "work"]], as: owner)
        #expect(zone["subscriptionID"]?.stringValue?.isEmpty == false)
        _ = try server.subscribe(["subscriptionID": "db", "subscriptionType": "database"], as: owner)
        let list = try server.get("subscriptions/list", token: .some(owner.token), database: "private").json["subscriptions"]?.arrayValue ?? []
        #expect(list.count == 3)
        let lookup = try server.post("subscriptions/lookup", ["subscriptions": [["subscriptionID": "db"], ["subscriptionID": "nope"]]],
                                     as: owner, database: "private").json["subscriptions"]?.arrayValue ?? []
        #expect(lookup.first?["subscriptionType"] == "database")
        #expect(lookup.last?.serverErrorCode == "NOT_FOUND")
        let update = try server.post("subscriptions/modify", ["operations": [["operationType": "update", "subscription": [
            "subscriptionID": "big", "subscriptionType": "query", "query": ["recordType": "Item"], "firesOn": ["delete"]]]]],
                                     as: owner, database: "private").json["subscriptions"]?.arrayValue?.first
        #expect(update?["firesOn"] == ["delete"])
        let delete = try server.post("subscriptions/modify", ["operations": [["operationType": "delete", "subscription": ["subscriptionID": "db"]]]],
                                     as: owner, database: "private").json["subscriptions"]?.arrayValue?.first
        #expect(delete?["deleted"] == true)
        #expect((try server.get("subscriptions/list", token: .some(owner.token), database: "private").json["subscriptions"]?.arrayValue ?? []).count == 2)
    }

    @Test("bad subscriptions are refused with the reason", arguments: [
        (["subscriptionType": "query"], "needs a 'query'"),
        (["subscriptionType": "zone"], "needs a 'zoneID'"),
        (["subscriptionType": "weekly"], "subscriptionType"),
        (["subscriptionType": "query", "query": ["recordType": "Item"], "firesOn": ["explode"]], "firesOn"),
        (["subscriptionType": "database", "webhookURL": "http://example.com/hook"], "webhookURL"),
        (["subscriptionType": "zone", "zoneID": ["zoneName": "missing"]], "ZONE_NOT_FOUND"),
        (["subscriptionType": "database", "webhookURL": "http://127.0.0.1:1@192.0.2.2:9911/x"], "webhookURL"),
        (["subscriptionType": "database", "webhookURL": "https://169.254.169.254/latest"], "webhookURL"),
        (["subscriptionType": "query", "query": ["recordType": "Item"], "zoneWide": true, "zoneID": ["zoneName": "z"]], "not both"),
        (["subscriptionType": "database", "notificationInfo": ["alertBody": .string(String(repeating: "x", count: 5000))]], "at most 4096"),
    ] as [(JSONValue, String)])
    func refusals(_ subscription: JSONValue, _ word: String) throws {
        let server = try Shared.server
        let owner = try server.person("subscriber")
        let response = try server.post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": subscription]]],
                                       as: owner, database: "private")
        let text = response.text
        #expect(text.contains(word), "\(text)")
        #expect(response.json.serverErrorCode != nil || response.json["subscriptions"]?.arrayValue?.first?.serverErrorCode != nil)
    }

    @Test("notifications: query subscriptions fire for matching records only, zone and database ones for any change; no record contents")
    func notifications() throws {
        let server = try Shared.server
        let owner = try server.person("notified")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "inbox"]]]]], as: owner, database: "private")
        let courier = try server.webcourier(as: owner)
        _ = try server.subscribe(["subscriptionID": "big", "subscriptionType": "query", "query": [
            "recordType": "Item", "filterBy": [["comparator": "GREATER_THAN", "fieldName": "n", "fieldValue": ["value": 10]]]]], as: owner)
        _ = try server.subscribe(["subscriptionID": "inbox", "subscriptionType": "zone", "zoneID": ["zoneName": "inbox"]], as: owner)
        _ = try server.subscribe(["subscriptionID": "everything", "subscriptionType": "database"], as: owner)
        let created = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "small", recordType: "Item", fields: ["n": Body.field(1), "secret": Body.field("s3cret")]),
            Body.operation("create", name: "large", recordType: "Item", fields: ["n": Body.field(50), "secret": Body.field("s3cret")]),
        ], zone: "inbox"), as: owner, database: "private").json
        let got = try server.notifications(at: courier, count: 3)
        let bySubscription = Dictionary(grouping: got, by: { $0["subscriptionID"]?.stringValue ?? "" })
        #expect(bySubscription["big"]?.count == 1)
        #expect(bySubscription["big"]?.first?["recordName"] == "large")
        #expect(bySubscription["big"]?.first?["queryNotificationReason"] == "recordCreated")
        #expect(bySubscription["inbox"]?.first?["notificationType"] == "recordZone")
        #expect(bySubscription["everything"]?.first?["notificationType"] == "database")
        #expect(got.allSatisfy { JSONWriter.string($0).contains("s3cret") == false })
        // Deleting the large record: a deletion notification (the query subscription fires on delete too).
        _ = try server.post("records/modify", Body.modify([Body.operation("delete", name: "large", recordType: nil,
                                                                          tag: created.record(1)["recordChangeTag"]?.stringValue)], zone: "inbox"),
                            as: owner, database: "private")
        let after = try server.notifications(at: courier, count: 3)
        #expect(after.contains { $0["queryNotificationReason"] == "recordDeleted" && $0["recordName"] == "large" })
    }

    @Test("a subscription fires only for changes its owner may see; firesOnce fires once")
    func sharedVisibility() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let ann = try server.person("ann")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(ann)])
        try server.accept(note, as: ann)
        let courier = try server.webcourier(as: ann)
        _ = try server.subscribe(["subscriptionID": "mine", "subscriptionType": "database"], as: ann, database: "shared")
        _ = try server.subscribe(["subscriptionID": "once", "subscriptionType": "query", "firesOnce": true, "query": ["recordType": "Note"],
                                  "zoneID": note.sharedZoneID], as: ann, database: "shared")
        // Outside Ann's share: nothing for her.
        _ = try server.ownerModify(note, [Body.operation("create", name: "private-note", fields: [:])])
        #expect(try server.notifications(at: courier, count: 1, seconds: 1).isEmpty)
        // Inside it: both fire; the firesOnce subscription is gone afterwards.
        _ = try server.ownerModify(note, [Body.operation("create", name: "shared-1", fields: [:], extra: ["parent": ["recordName": "note"]]),
                                          Body.operation("create", name: "shared-2", fields: [:], extra: ["parent": ["recordName": "note"]])])
        let got = try server.notifications(at: courier, count: 2)
        #expect(got.filter { $0["subscriptionID"] == "once" }.count == 1)
        #expect(got.contains { $0["subscriptionID"] == "mine" && $0["databaseScope"] == "SHARED" })
        Thread.sleep(forTimeInterval: 0.3)
        let list = try server.get("subscriptions/list", token: .some(ann.token), database: "shared").json["subscriptions"]?.arrayValue ?? []
        #expect(list.compactMap { $0["subscriptionID"]?.stringValue } == ["mine"])
    }

    @Test("webhooks: signed with the subscription's secret, retried after failures, never blocking writes")
    func webhooks() throws {
        let server = try WebhookAddressTests.loopbackOpened.server
        let owner = try server.person("hooked")
        let receiver = try WebhookReceiver(failures: 2)
        let created = try server.subscribe(["subscriptionID": "hook", "subscriptionType": "database", "webhookURL": .string(receiver.url)], as: owner)
        let secret = try #require(created["webhookSecret"]?.stringValue)
        #expect(secret.count == 64)
        // The secret is shown once.
        let listed = try server.get("subscriptions/list", token: .some(owner.token), database: "private").json["subscriptions"]?.arrayValue?.first
        #expect(listed?["webhookSecret"] == nil)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "ping", recordType: "Item", fields: ["n": Body.field(1)])]),
                            as: owner, database: "private")
        let deliveries = receiver.waitFor(1)
        let delivery = try #require(deliveries.first)
        #expect(delivery.attempt == "3", "two failures, then delivered")
        #expect(delivery.signature == WebhookSender.signature(delivery.body, secret: secret))
        let body = try JSONParser.parse(delivery.body)
        #expect(body["notification"]?["subscriptionID"] == "hook")
    }

    @Test("a database subscription fires when a zone is created or deleted")
    func zoneLifecycle() throws {
        let server = try Shared.server
        let owner = try server.person("zoner")
        let courier = try server.webcourier(as: owner)
        _ = try server.subscribe(["subscriptionID": "db", "subscriptionType": "database"], as: owner)
        for operation in ["create", "delete"] {
            _ = try server.post("zones/modify", ["operations": [["operationType": .string(operation), "zone": ["zoneID": ["zoneName": "temp"]]]]],
                                as: owner, database: "private")
        }
        let got = try server.notifications(at: courier, count: 2)
        #expect(got.count == 2)
        #expect(got.allSatisfy { $0["notificationType"] == "database" && $0["zoneID"]?["zoneName"] == "temp" })
    }

    @Test("query subscriptions see moves between shares as the subscriber does: into their share a creation, out of it a deletion")
    func movesBetweenShares() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let pam = try server.person("pam")
        let quinn = try server.person("quinn")
        let zone = unique("moves")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]], as: owner, database: "private")
        let created = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "a", fields: [:]), Body.operation("create", name: "b", fields: [:]),
            Body.operation("create", name: "x", recordType: "Item", fields: [:], extra: ["parent": ["recordName": "b"]]),
            Body.operation("create", name: "sa", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "a"], "participants": [Invite.email(pam)]]),
            Body.operation("create", name: "sb", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "b"], "participants": [Invite.email(quinn)]]),
        ], zone: zone), as: owner, database: "private").json
        let sharedZone: JSONValue = ["zoneName": .string(zone), "ownerRecordName": .string(owner.recordName)]
        for (person, index) in [(pam, 3), (quinn, 4)] {
            let guid = created.record(index)["shortGUID"]!.stringValue!
            try server.accept(SharedNote(owner: owner, zone: zone, shareName: "", guid: guid, shareTag: "", rootTag: "", childTag: ""), as: person)
            _ = try server.subscribe(["subscriptionID": "items", "subscriptionType": "query", "query": ["recordType": "Item"], "zoneID": sharedZone],
                                     as: person, database: "shared")
        }
        let pamCourier = try server.webcourier(as: pam)
        let quinnCourier = try server.webcourier(as: quinn)
        let x = try server.post("records/lookup", Body.lookup(["x"], zone: zone), as: owner, database: "private").json.record(0)
        _ = try server.post("records/modify", Body.modify([Body.operation("update", name: "x", recordType: nil, tag: x["recordChangeTag"]?.stringValue,
                                                                          extra: ["parent": ["recordName": "a"]])], zone: zone), as: owner, database: "private")
        let toPam = try server.notifications(at: pamCourier, count: 1)
        let toQuinn = try server.notifications(at: quinnCourier, count: 1)
        #expect(toPam.first?["queryNotificationReason"] == "recordCreated")
        #expect(toQuinn.first?["queryNotificationReason"] == "recordDeleted")
    }

    @Test("every long poll waiting on one token wakes for a notification")
    func concurrentLongPolls() throws {
        let server = try Shared.server
        let owner = try server.person("poller")
        let courier = try server.webcourier(as: owner)
        _ = try server.subscribe(["subscriptionID": "db", "subscriptionType": "database"], as: owner)
        let woke = Mutex(0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                if let response = try? server.request("GET", courier + "?format=tandem&timeout=10", token: .some(nil)),
                   response.json["notifications"]?.arrayValue?.isEmpty == false {
                    woke.withLock { $0 += 1 }
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        let started = Date()
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "wake", recordType: "Item", fields: [:])]), as: owner, database: "private")
        group.wait()
        #expect(Date().timeIntervalSince(started) < 8)
        #expect(woke.withLock { $0 } >= 1)
    }
}
