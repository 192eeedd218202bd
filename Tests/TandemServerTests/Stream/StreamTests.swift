import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// The stream WebSocket: authentication at connect, envelopes, notifications for what the
/// subscriber may see, device muting, and slow consumers.
@Suite("Stream WebSocket")
struct StreamTests {
    @Test("connecting needs a valid token; a signed-in client gets hello and answers ping with pong")
    func connect() async throws {
        let server = try Shared.server
        let anonymous = try await StreamProbe.connect(server, as: nil)
        #expect(await anonymous.wait { $0.closeCode != nil })
        #expect(anonymous.closeCode == 4401)
        let forged = Person(recordName: "_x", email: "x@example.com", token: "tdu_forged")
        let bad = try await StreamProbe.connect(server, as: forged)
        #expect(await bad.wait { $0.closeCode != nil })
        #expect(bad.closeCode == 4401)

        let person = try server.person("streamer")
        let probe = try await StreamProbe.connect(server, as: person)
        #expect(await probe.wait { $0.hasHello })
        let hello = probe.envelopes.withLock { $0.first }
        #expect(hello?["userRecordName"] == .string(person.recordName))
        await probe.client.send(text: #"{"type":"ping"}"#)
        await probe.client.send(text: "not json")
        await probe.client.send(text: #"{"type":"session.join","id":1180591620717411303424}"#)
        await probe.client.send(text: #"{"id":1}"#)
        func errors() -> [String] {
            probe.envelopes.withLock { $0.filter { $0["type"] == "error" }.compactMap { $0["reason"]?.stringValue } }
        }
        #expect(await probe.wait { $0.has("pong") && errors().count == 3 })
        // A parse failure says so; only a parsed envelope without a type is told to send one.
        let reasons = errors()
        #expect(reasons.prefix(2).allSatisfy { $0.hasPrefix("the envelope is not JSON this server reads") }, "\(reasons)")
        #expect(reasons.last == "send JSON envelopes with a 'type'", "\(reasons)")
        probe.client.close(WebSocketClose(code: WebSocketClose.normal))
    }

    @Test("a client hears each matching write, nothing it may not see, and not its own device's writes when it asked so")
    func notifications() async throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let reader = try server.person("reader")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(reader)])
        try server.accept(note, as: reader)
        _ = try server.subscribe(["subscriptionID": "zone", "subscriptionType": "zone", "zoneID": ["zoneName": .string(note.zone)]], as: owner)
        _ = try server.subscribe(["subscriptionID": "shared", "subscriptionType": "database"], as: reader, database: "shared")
        let ownerPhone = try await StreamProbe.connect(server, as: owner, query: "deviceID=phone&notifyOwnChanges=false")
        let ownerLaptop = try await StreamProbe.connect(server, as: owner, query: "deviceID=laptop")
        let readerStream = try await StreamProbe.connect(server, as: reader)
        for probe in [ownerPhone, ownerLaptop, readerStream] {
            #expect(await probe.wait { $0.hasHello })
        }
        // Written from the phone, outside the share: the laptop hears it, the phone (muted) and the reader do not.
        let write = try server.request("POST", server.databaseURL("records/modify") + "?deviceID=phone",
                                       body: Data(JSONWriter.bytes(Body.modify([Body.operation("create", name: "outside", fields: [:])], zone: note.zone))),
                                       token: .some(owner.token))
        #expect(write.status == 200)
        #expect(await ownerLaptop.wait { $0.notifications.count == 1 })
        // Inside the share, from the laptop: the reader hears it too.
        _ = try server.request("POST", server.databaseURL("records/modify") + "?deviceID=laptop",
                               body: Data(JSONWriter.bytes(Body.modify([Body.operation("create", name: "inside", fields: [:],
                                                                                       extra: ["parent": ["recordName": "note"]])], zone: note.zone))),
                               token: .some(owner.token))
        #expect(await readerStream.wait { $0.notifications.count == 1 })
        #expect(await ownerPhone.wait { $0.notifications.count == 1 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(ownerLaptop.notifications.count == 2)
        #expect(ownerPhone.notifications.count == 1, "the phone's own write was muted")
        #expect(readerStream.notifications.count == 1, "the write outside the share never reached the reader")
        let heard = try #require(readerStream.notifications.first)
        #expect(heard["databaseScope"] == "SHARED")
        #expect(heard["notificationType"] == "database")
        #expect(heard["zoneID"]?["zoneName"] == .string(note.zone))
        #expect(JSONWriter.string(heard).contains("fields") == false)
    }

    @Test("a client that stops reading is closed as a slow consumer; writers and other clients carry on")
    func slowConsumer() async throws {
        let server = try TestServer()
        try server.start(extraArguments: ["--stream-queue", "1000", "--quiet"])
        let owner = try server.person("owner")
        let observer = try server.person("observer")
        // Ten query subscriptions on every Item, with a 2 KB alert: each record is ten large
        // notifications for the owner, who stops reading.
        for index in 0..<10 {
            _ = try server.subscribe(["subscriptionID": .string("items-\(index)"), "subscriptionType": "query", "query": ["recordType": "Item"],
                                      "notificationInfo": ["alertBody": .string(String(repeating: "n", count: 2000))]], as: owner)
        }
        // The observer shares the zone and hears one notification per write.
        let zone = unique("busy")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        let share = try server.post("records/modify", Body.modify([Body.operation("create", name: "cloudkit.zoneshare", recordType: "cloudkit.share",
                                                                                  extra: ["participants": [Invite.email(observer)]])], zone: zone),
                                    as: owner, database: "private").json.record(0)
        let note = SharedNote(owner: owner, zone: zone, shareName: "cloudkit.zoneshare", guid: share["shortGUID"]!.stringValue!,
                              shareTag: "", rootTag: "", childTag: "")
        try server.accept(note, as: observer)
        _ = try server.subscribe(["subscriptionID": "all", "subscriptionType": "database"], as: observer, database: "shared")
        let reading = try await StreamProbe.connect(server, as: observer)
        let stalled = try StalledWebSocket(port: server.port, path: "/stream/1/\(TestServer.container)/development", token: owner.token)
        #expect(await reading.wait { $0.hasHello })
        let started = Date()
        for batch in 0..<40 {
            let operations = (0..<25).map { Body.operation("create", name: "r-\(batch)-\($0)", recordType: "Item", fields: ["n": Body.field(1)]) }
            let response = try server.post("records/modify", Body.modify(operations, zone: zone), as: owner, database: "private")
            #expect(response.status == 200)
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(await stalled.waitUntilClosed(seconds: 20), "the stalled client was disconnected")
        #expect(await reading.wait(seconds: 20) { $0.notifications.count == 40 }, "the observer heard every write")
        #expect(reading.closeCode == nil)
        #expect(elapsed < 60, "writes went on (\(elapsed) s)")
    }
}
