import Foundation
import Testing
import TandemCore
import TandemHTTP
@testable import TandemServer

/// Webhooks reach internal addresses only where the operator opened them (`--webhook-allow`),
/// both when the subscription is saved and at every delivery.
@Suite struct WebhookAddressTests {
    /// A server that may deliver to loopback, as a test's receiver needs.
    static let loopbackOpened = LazyTestServer(arguments: ["--webhook-allow", "127.0.0.0/8"])

    @Test func aLoopbackWebhookIsRefusedWithoutTheOperatorsPermission() throws {
        let server = try Shared.server
        let owner = try server.person("intruder")
        let receiver = try WebhookReceiver()
        for url in [receiver.url, "http://2130706433:\(receiver.server.port)/hook", "http://[::ffff:127.0.0.1]:\(receiver.server.port)/hook"] {
            let response = try server.post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": [
                "subscriptionType": "database", "webhookURL": .string(url)]]]], as: owner, database: "private")
            #expect(response.status == 400, "\(url)")
            #expect(response.json.serverErrorCode == "BAD_REQUEST")
            #expect(response.text.contains("is loopback"), "\(url): \(response.text)")
        }
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "ping", recordType: "Item", fields: [:])]),
                            as: owner, database: "private")
        #expect(receiver.waitFor(1, seconds: 1).isEmpty)
    }

    @Test func aWebhookSavedWhileAllowedIsNotDeliveredOnceTheAllowanceIsWithdrawn() throws {
        let server = try TestServer(extraArguments: ["--webhook-allow", "127.0.0.0/8"])
        let owner = try server.person("hooked")
        let receiver = try WebhookReceiver()
        let created = try server.subscribe(["subscriptionID": "hook", "subscriptionType": "database", "webhookURL": .string(receiver.url)], as: owner)
        #expect(created["webhookSecret"]?.stringValue != nil, "\(created)")
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "one", recordType: "Item", fields: [:])]),
                            as: owner, database: "private")
        #expect(receiver.waitFor(1).count == 1, "delivered while 127.0.0.0/8 is open")

        try server.start()
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "two", recordType: "Item", fields: [:])]),
                            as: owner, database: "private")
        #expect(receiver.waitFor(2, seconds: 2).count == 1, "checked again at delivery: refused without --webhook-allow")
    }

    @Test func aWebhookURLWithGlobCharactersIsOneRequestPerNotification() throws {
        let server = try Self.loopbackOpened.server
        let owner = try server.person("globber")
        let receiver = try WebhookReceiver()
        let url = "http://127.0.0.1:\(receiver.server.port)/hook[1-5]{a,b}"
        let created = try server.subscribe(["subscriptionID": "glob", "subscriptionType": "database", "webhookURL": .string(url)], as: owner)
        #expect(created["webhookSecret"]?.stringValue != nil, "\(created)")
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "once", recordType: "Item", fields: [:])]),
                            as: owner, database: "private")
        #expect(receiver.waitFor(1).count == 1)
        // curl's URL globbing would have made 10 requests of this one notification.
        #expect(receiver.waitFor(2, seconds: 2).count == 1)
    }

    @Test func anInvalidAllowBlockStopsTheServerFromStarting() throws {
        let result = try runTandem(["serve", "--port", "0", "--webhook-allow", "127.0.0.1/8", "--data", NSTemporaryDirectory() + "tandem-" + UUID().uuidString])
        #expect(result.status == 64)
        #expect(result.error.contains("--webhook-allow takes an address block"), "\(result.error)")
    }
}
