import Foundation
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// The console's subscriptions, webhook deliveries and Shared with You pages (issue 18 items 6
/// and 7; decisions C40–C45) against a real server, with a real webhook receiver on loopback
/// and association files uploaded as an operator does.
@Suite struct ConsolePushTests {
    /// Webhooks may reach loopback, where the test's receiver listens.
    private static let lazy = LazyTestServer(arguments: TestServer.cheapHash + ["--webhook-allow", "127.0.0.0/8"])

    /// This suite's server, with `ConsoleTests`' administrator.
    static var server: TestServer {
        get throws { try ConsoleTests.withAdmin(lazy.server) }
    }

    static func admin() throws -> ConsoleClient {
        try ConsoleTests.admin(on: lazy.server)
    }

    static let base = "/console/containers/\(TestServer.container)"

    /// As the console encodes query values: all but RFC 3986's unreserved characters.
    static func percent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
    }

    /// The IDs in the subscriptions table of a page, in order.
    static func listedIDs(_ html: String) -> [String] {
        html.components(separatedBy: "<tr><td><code>").dropFirst().map { String($0.prefix { $0 != "<" }) }
    }

    @Test func theSubscriptionsPageListsEveryonesSubscriptionsAndFiltersByAccountAndDatabase() throws {
        let server = try Self.server
        let ada = try server.person("ada"), bob = try server.person("bob")
        let adaID = unique("ada-db"), bobID = unique("bob-zone"), publicID = unique("bob-public")
        _ = try server.subscribe(["subscriptionID": .string(adaID), "subscriptionType": "database",
                                  "notificationInfo": ["alertBody": "changed", "shouldSendContentAvailable": true]], as: ada)
        _ = try server.subscribe(["subscriptionID": .string(bobID), "subscriptionType": "zone", "zoneID": ["zoneName": "_defaultZone"]], as: bob)
        _ = try server.subscribe(["subscriptionID": .string(publicID), "subscriptionType": "query", "query": ["recordType": "Listing"],
                                  "firesOn": ["create", "delete"]], as: bob, database: "public")
        let console = try Self.admin()
        let all = try console.get("\(Self.base)/subscriptions/development")
        #expect(all.status == 200)
        #expect(Set([adaID, bobID, publicID]).isSubset(of: Set(Self.listedIDs(all.text))), "\(all.text)")
        #expect(all.text.contains("query of Listing"))
        #expect(all.text.contains("create, delete"))
        #expect(all.text.contains("&quot;alertBody&quot;:&quot;changed&quot;"), "notification info shown")
        #expect(all.text.contains("stream (0 open), long poll (0 waiting)"))

        let bobs = try console.get("\(Self.base)/subscriptions/development?user=\(bob.email)")
        #expect(Set(Self.listedIDs(bobs.text)) == [bobID, publicID])
        let bobsPublic = try console.get("\(Self.base)/subscriptions/development?user=\(bob.recordName)&database=public")
        #expect(Self.listedIDs(bobsPublic.text) == [publicID])
        // Production holds none of them.
        #expect(Self.listedIDs(try console.get("\(Self.base)/subscriptions/production?user=\(bob.email)").text).isEmpty)
    }

    @Test(arguments: [("user=nobody%40example.com", "field-user-error", "no account"), ("database=everything", "field-database-error", "public, private or shared")])
    func aBadFilterIsRefusedBesideItsField(query: String, errorID: String, message: String) throws {
        let console = try Self.admin()
        let page = try console.get("\(Self.base)/subscriptions/development?\(query)")
        #expect(page.status == 400)
        #expect(page.text.contains("id=\"\(errorID)\""), "\(page.text)")
        #expect(page.text.contains(message))
        #expect(page.text.contains("aria-invalid=\"true\""))
    }

    @Test func deletingASubscriptionGoesThroughTheSubscriptionRulesAndRefusalsChangeNothing() throws {
        let server = try Self.server
        let cat = try server.person("cat")
        let id = unique("cat-db")
        _ = try server.subscribe(["subscriptionID": .string(id), "subscriptionType": "database"], as: cat)
        func listed() throws -> [String] {
            try server.get("subscriptions/list", token: .some(cat.token), database: "private").json["subscriptions"]?.arrayValue?
                .compactMap { $0["subscriptionID"]?.stringValue } ?? []
        }
        let console = try Self.admin()
        _ = try console.get("\(Self.base)/subscriptions/development?user=\(cat.email)")
        let action = "\(Self.base)/subscriptions/development/delete"
        // The wrong database: the service finds nothing there (NOT_FOUND), nothing is deleted.
        let wrongDatabase = try console.post(action, ["owner": cat.recordName, "database": "shared", "subscription": id])
        #expect(wrongDatabase.status == 404)
        #expect(wrongDatabase.text.contains("subscription &#39;\(id)&#39; does not exist"), "\(wrongDatabase.text)")
        for fields in [["owner": cat.recordName, "database": "attic", "subscription": id], ["owner": "nobody@example.com", "database": "private", "subscription": id],
                       ["owner": cat.recordName, "database": "private", "subscription": ""]] {
            let refused = try console.post(action, fields)
            #expect(refused.status == 400, "\(fields)")
            #expect(refused.text.contains("id=\"error\""), "\(fields)")
        }
        #expect(try listed().contains(id))
        // Without the CSRF field: refused, nothing deleted.
        #expect(try console.post(action, ["owner": cat.recordName, "database": "private", "subscription": id, "csrf": ""]).status == 403)
        #expect(try listed().contains(id))

        let deleted = try console.post(action, ["owner": cat.email, "database": "private", "subscription": id, "user": cat.email])
        #expect(deleted.status == 303)
        #expect(deleted.headers["location"] == "\(Self.base)/subscriptions/development?done=subscription-deleted&user=\(Self.percent(cat.email))")
        #expect(try listed().contains(id) == false)
        #expect(try console.get(deleted.headers["location"]!).text.contains("The subscription was deleted."))
        // The log is written by its own thread, a moment after the answer.
        var logged = false
        for _ in 0..<150 where !logged {
            logged = server.standardError?.value.contains("console: administrator root@example.com") == true
                && server.standardError?.value.contains("deleted subscription \(id) of \(cat.recordName)") == true
            if !logged { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(logged)
    }

    @Test func everyWebhookAttemptIsLoggedWithItsStatusLatencyAndAttemptNumber() throws {
        let server = try Self.server
        let dan = try server.person("dan")
        let receiver = try WebhookReceiver(failures: 2)
        let id = unique("hook")
        _ = try server.subscribe(["subscriptionID": .string(id), "subscriptionType": "database", "webhookURL": .string(receiver.url)], as: dan)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "ping", recordType: "Item", fields: [:])]), as: dan, database: "private")
        #expect(receiver.waitFor(1).count == 1)
        let console = try Self.admin()
        // The log entry of the third attempt is appended just after the receiver answered.
        var page = try console.get("\(Self.base)/webhooks/development?subscription=\(id)")
        let deadline = Date().addingTimeInterval(10)
        while !page.text.contains("3 of 5") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            page = try console.get("\(Self.base)/webhooks/development?subscription=\(id)")
        }
        let rows = page.text.components(separatedBy: "<tr>").filter { $0.contains("<code>\(id)</code>") }
        #expect(rows.count == 3, "\(page.text)")
        // Newest first: delivered on the third attempt after two 500s.
        #expect(rows.first?.contains("HTTP 204") == true && rows.first?.contains("3 of 5") == true && rows.first?.contains(">delivered<") == true)
        #expect(rows.dropFirst().allSatisfy { $0.contains("HTTP 500") && $0.contains(">retrying<") })
        #expect(rows.allSatisfy { $0.contains("127.0.0.1:\(receiver.server.port)") && $0.contains(" ms</td>") })
        #expect(!page.text.contains("/hook"), "only the host is shown")
        // The subscription page links there; another owner's filter hides them.
        #expect(try console.get("\(Self.base)/subscriptions/development?user=\(dan.email)").text
            .contains("webhooks/development?subscription=\(id)&amp;user=\(dan.recordName)"))
        #expect(!(try console.get("\(Self.base)/webhooks/development?user=root%40example.com").text.contains(id)))
    }

    /// A webhook URL's path may carry its receiver's secret: an administrator sees the host on
    /// every page, the user page included; only the account's own page shows the whole URL (C41, C62).
    @Test func aWebhookURLsPathIsShownOnlyOnItsOwnersAccountPage() throws {
        let server = try Self.server
        let (fay, own) = try server.consoleMember("fay")
        let id = unique("secret-hook")
        _ = try server.subscribe(["subscriptionID": .string(id), "subscriptionType": "database",
                                  "webhookURL": "http://127.0.0.1:9/hooks/s3cr3t-path-token"], as: fay)
        let console = try Self.admin()
        for page in ["/console/users/\(fay.recordName)", "\(Self.base)/subscriptions/development?user=\(fay.recordName)"] {
            let text = try console.get(page).text
            #expect(text.contains(id) && text.contains("127.0.0.1:9"), "\(page): \(text)")
            #expect(!text.contains("s3cr3t-path-token"), "\(page) shows the webhook's path")
        }
        #expect(try own.get("/console/account").text.contains("http://127.0.0.1:9/hooks/s3cr3t-path-token"))
    }

    @Test func aWebhookThatCannotBeReachedIsLoggedWithTheFailure() throws {
        let server = try Self.server
        let eve = try server.person("eve")
        // Port 1 on loopback: nothing listens there, so the connection is refused.
        let url = "http://127.0.0.1:1/hook"
        let id = unique("dead")
        _ = try server.subscribe(["subscriptionID": .string(id), "subscriptionType": "database", "webhookURL": .string(url)], as: eve)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "ping", recordType: "Item", fields: [:])]), as: eve, database: "private")
        let console = try Self.admin()
        var page = try console.get("\(Self.base)/webhooks/development?subscription=\(id)")
        let deadline = Date().addingTimeInterval(10)
        while !page.text.contains("<code>\(id)</code>") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            page = try console.get("\(Self.base)/webhooks/development?subscription=\(id)")
        }
        let row = try #require(page.text.components(separatedBy: "<tr>").first { $0.contains("<code>\(id)</code>") })
        #expect(row.contains("1 of 5") && row.contains(">retrying<"), "\(row)")
        #expect(!row.contains("HTTP "), "no status without an answer: \(row)")
    }

    @Test func theLinkTesterShowsTheMatchersDecisionAndTheRuleThatDecided() throws {
        let server = try Self.server
        let tag = UUID().uuidString.prefix(8).lowercased()
        let app = "ABCDE12345.com.example.\(tag)", domain = "\(tag).example.com"
        _ = try TestServer.admin(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)", "--data", server.dataDirectory])
        let operatorToken = try TestServer.admin(["token", "create", "--admin", "--data", server.dataDirectory])
        let file = #"{"applinks": {"details": [{"appIDs": ["\#(app)"], "components": [{"/": "/buy/secret*", "exclude": true}, {"/": "/buy/*"}]}]}}"#
        let upload = try server.request("POST", "\(server.baseURL)/tandem/1/\(TestServer.container)/development/links/upload?domain=\(domain)",
                                        body: Data(file.utf8), token: .some(operatorToken))
        #expect(upload.status == 200, "\(upload.text)")
        let console = try Self.admin()
        let page = try console.get("\(Self.base)/sharedwithyou/development")
        #expect(page.text.contains("<code>\(app)</code>"))
        #expect(page.text.contains("applinks.details[0].components[0]") && page.text.contains(">exclude<"), "the file's rules are listed")
        let action = "\(Self.base)/sharedwithyou/development/test"
        let open = try console.post(action, ["app": app, "url": "https://\(domain)/buy/shoes"])
        #expect(open.status == 200)
        #expect(open.text.contains("data-decision=\"open\""), "\(open.text)")
        #expect(open.text.contains("applinks.details[0].components[1]"))
        let blocked = try console.post(action, ["app": app, "url": "https://\(domain)/buy/secret-sale"])
        #expect(blocked.text.contains("data-decision=\"blocked\""))
        #expect(blocked.text.contains("<code>applinks.details[0].components[0]</code>"))
        let none = try console.post(action, ["app": app, "url": "https://\(domain)/about"])
        #expect(none.text.contains("data-decision=\"noMatch\""))
        #expect(!none.text.contains("id=\"test-rule\""))

        let badURL = try console.post(action, ["app": app, "url": "ftp://\(domain)/buy/shoes"])
        #expect(badURL.status == 400)
        #expect(badURL.text.contains("id=\"field-url-error\"") && badURL.text.contains("not an http(s) URL"))
        let unknownApp = try console.post(action, ["app": "ZZZZZ99999.com.example.none", "url": "https://\(domain)/buy/shoes"])
        #expect(unknownApp.status == 404)
        #expect(unknownApp.text.contains("id=\"field-app-error\""))
        let empty = try console.post(action, ["app": "", "url": ""])
        #expect(empty.status == 400)
        #expect(empty.text.contains("id=\"field-url-error\"") && empty.text.contains("id=\"field-app-error\""))
        #expect(try console.post(action, ["app": app, "url": "https://\(domain)/buy/shoes", "csrf": "0"]).status == 403)
    }

    @Test func theSharedWithYouPageCountsConversationsMessagesAndLinks() throws {
        // A container of its own, so the counts are exactly this test's.
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let fay = try server.person("fay"), gus = try server.person("gus")
        let conversation = try server.conversation(fay, with: [gus])
        for text in ["hello", "look at https://example.org/menu and https://example.org/map."] {
            let sent = try server.tandem("conversations/messages/send", ["conversation": .string(conversation), "text": .string(text)], as: fay)
            #expect(sent.status == 200, "\(sent.text)")
        }
        let console = try ConsoleTests.admin(on: server)
        let page = try console.get("\(Self.base)/sharedwithyou/development")
        #expect(page.text.contains("id=\"count-conversations\">1<"), "\(page.text)")
        #expect(page.text.contains("id=\"count-messages\">2<"))
        #expect(page.text.contains("id=\"count-links\">2<"))
        #expect(try console.get("\(Self.base)/sharedwithyou/production").text.contains("id=\"count-conversations\">0<"))
        #expect(try console.get("\(Self.base)/sharedwithyou/staging").status == 404)
    }
}
