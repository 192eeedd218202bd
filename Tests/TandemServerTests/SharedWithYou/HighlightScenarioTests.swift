import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP

/// Issue 8 scenario 1: three users, a group conversation, links of two apps and an unrelated
/// site; each app sees only its links, attributed, in D20 order; hide is per user; turning the
/// app off empties the list and says why.
@Suite("SharedWithYou highlights")
struct HighlightScenarioTests {
    @Test func eachAppSeesItsOwnLinksAttributedInOrder() async throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let (appA, domainA) = appNames()
        let (appB, domainB) = appNames()
        try server.registerApp(appA, domain: domainA, components: #"[{"/": "/items/*"}]"#)
        try server.registerApp(appB, domain: domainB)
        try server.addContacts(ada, [bob, cat])
        try server.addContacts(bob, [ada])
        let group = try server.conversation(ada, with: [bob, cat], title: "Weekend")
        let direct = try server.conversation(cat, with: [ada])

        let probe = try await StreamProbe.connect(server, as: ada)
        #expect(await probe.wait { $0.hasHello })
        _ = await probe.client.send(text: JSONWriter.string(["type": "highlights.subscribe", "app": .string(appA)]))
        #expect(await probe.wait { $0.has("highlights") })

        let a1 = "https://\(domainA)/items/1", a2 = "https://\(domainA)/items/2", aOther = "https://\(domainA)/about"
        let b1 = "https://\(domainB)/read/1"
        try server.say("first \(a1)", in: group, as: bob)
        try server.say("mine \(b1)", in: group, as: ada)
        try server.say("unrelated https://unrelated.example.net/x and \(aOther)", in: group, as: bob)
        try server.say("second", in: group, as: bob, links: [["url": .string(a2), "title": "Item two"]])
        try server.say("again \(a1)", in: direct, as: cat)

        // App A: a1 (shared again last, in the 1:1) then a2; /about does not open the app.
        let forAda = try server.highlights(ada, app: appA)
        #expect(forAda.authorization == "allowed")
        #expect(forAda.urls == [a1, a2])
        let first = forAda.json[0]
        let attributions = first["attributions"]?.arrayValue ?? []
        #expect(attributions.count == 2)  // one per conversation (D21)
        #expect(attributions.map { $0["conversationID"]?.stringValue } == [direct, group])
        #expect(attributions.map { $0["sender"]?.stringValue } == [cat.recordName, bob.recordName])
        #expect(forAda.json[1]["attributions"]?.arrayValue?.first?["title"] == "Item two")
        // App B: ada sent b1 herself (D23); bob sees it.
        #expect(try server.highlights(ada, app: appB).urls == [])
        #expect(try server.highlights(bob, app: appB).urls == [b1])
        // Cat has no contacts: a group surfaces links only when another member is one (D22).
        #expect(try server.highlights(cat, app: appA).urls == [])
        try server.addContacts(cat, [bob])
        // Her own re-share of a1 does not count for her (D23): a1 dates from bob's message.
        #expect(try server.highlights(cat, app: appA).urls == [a2, a1])

        // Pinned before the rest (D20), then the suggested one first.
        #expect(try server.tandem("conversations/pins/modify", ["conversation": .string(group), "url": .string(a2), "pinned": true], as: ada).status == 200)
        #expect(try server.highlights(ada, app: appA).urls == [a2, a1])
        #expect(try server.highlights(ada, app: appA).json[0]["pinned"] == true)
        #expect(try server.tandem("highlights/feedback", ["url": .string(a1), "context": "detail"], as: ada).status == 200)
        let ranked = try server.highlights(ada, app: appA)
        #expect(ranked.urls == [a1, a2])
        #expect(ranked.json[0]["suggested"] == true)

        // The stream pushed the latest order as a full snapshot.
        #expect(await probe.wait { probe in
            probe.envelopes.withLock { $0.last { $0["type"] == "highlights" }?["highlights"]?.arrayValue?.compactMap { $0["url"]?.stringValue } } == [a1, a2]
        })

        // Lookup by URL, and hide for ada only.
        let lookup = try server.tandemGet("highlights/lookup", ["app": appA, "url": a2], as: ada)
        #expect(lookup.json["url"] == .string(a2))
        #expect(try server.tandemGet("highlights/lookup", ["app": appA, "url": "https://\(domainA)/items/none"], as: ada).status == 404)
        #expect(try server.tandem("highlights/hide", ["url": .string(a1)], as: ada).status == 200)
        #expect(try server.highlights(ada, app: appA).urls == [a2])
        #expect(try server.highlights(cat, app: appA).urls == [a2, a1])

        // Turning the app off empties the list and says why; the global switch too.
        #expect(try server.tandem("conversations/consent/modify", ["scope": "app", "target": .string(appA), "allowed": false], as: ada).status == 200)
        let off = try server.highlights(ada, app: appA)
        #expect(off.urls.isEmpty)
        #expect(off.authorization == "deniedForApp")
        #expect(await probe.wait { probe in
            probe.envelopes.withLock { $0.last { $0["type"] == "highlights" }?["authorization"] } == "deniedForApp"
        })
        #expect(try server.tandem("conversations/consent/modify", ["scope": "global", "allowed": false], as: bob).status == 200)
        #expect(try server.highlights(bob, app: appB).authorization == "deniedGlobally")
        #expect(try server.highlights(bob, app: appB).urls.isEmpty)
        // No links at all: allowed and empty ("none" is not "not allowed").
        let dan = try server.person("dan")
        #expect(try server.highlights(dan, app: appA).authorization == "allowed")
        probe.client.close()
    }

    @Test func conversationConsentIsBypassedByPins() throws {
        let server = try Shared.server
        let (ada, bob) = (try server.person("ada"), try server.person("bob"))
        let (app, domain) = appNames()
        try server.registerApp(app, domain: domain)
        try server.addContacts(ada, [bob])
        let direct = try server.conversation(bob, with: [ada])
        let (one, two) = ("https://\(domain)/1", "https://\(domain)/2")
        try server.say("\(one) \(two)", in: direct, as: bob)
        #expect(try server.highlights(ada, app: app).urls.count == 2)
        #expect(try server.tandem("conversations/consent/modify", ["scope": "conversation", "target": .string(direct), "allowed": false], as: ada).status == 200)
        #expect(try server.highlights(ada, app: app).urls.isEmpty)
        #expect(try server.tandem("conversations/pins/modify", ["conversation": .string(direct), "url": .string(two)], as: ada).status == 200)
        #expect(try server.highlights(ada, app: app).urls == [two])
        // A 1:1 sender who is not a contact surfaces nothing (D22) unless pinned.
        let eve = try server.person("eve")
        let fromStranger = try server.conversation(eve, with: [ada])
        try server.say("https://\(domain)/3", in: fromStranger, as: eve)
        #expect(try server.highlights(ada, app: app).urls == [two])
    }

    @Test func highlightRefusals() throws {
        let server = try Shared.server
        let ada = try server.person("ada")
        #expect(try server.tandemGet("highlights/list", ["app": "ABCDE12345.com.example.unknown"], as: ada).status == 404)
        #expect(try server.tandemGet("highlights/list", [:], as: ada).status == 400)
        #expect(try server.tandem("highlights/hide", ["url": "https://never.example/x"], as: ada).status == 404)
        #expect(try server.tandem("highlights/feedback", ["url": "https://never.example/x", "context": "glance"], as: ada).status == 400)
        #expect(try server.tandem("highlights/feedback", ["url": 7, "context": "detail"], as: ada).json.serverErrorCode == "BAD_REQUEST")
    }
}
