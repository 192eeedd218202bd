import Foundation
import Testing
import TandemCore

/// Association files fetched from the domain (a local origin server here): no redirects,
/// 128 KiB, `application/json`, kept for the TTL, replaced by an explicit refresh.
@Suite struct LinkFetchTests {
    /// Registers a fresh app for a fresh domain; returns both.
    func registered() throws -> (app: String, domain: String) {
        let names = LinksServer.names()
        let added = try LinksServer.tandem(["app", "add", names.app, "--container", TestServer.container, "--domains", "applinks:\(names.domain)"])
        #expect(added.status == 0, "\(added.error)")
        return names
    }

    func refresh(_ domain: String, allow: [String] = ["--webhook-allow", "127.0.0.0/8"]) throws -> (status: Int32, output: String, error: String) {
        try LinksServer.tandem(["links", "refresh", domain, "--container", TestServer.container,
                                "--links-fetch-origin", try LinksServer.shared.origin.origin] + allow)
    }

    @Test func anInternalOriginIsFetchedOnlyWhereTheOperatorOpenedIt() throws {
        let (app, domain) = try registered()
        try LinksServer.shared.origin.serve(domain, .init(body: LinksServer.file(app, #"[{"/": "/a/*"}]"#)))
        let refused = try refresh(domain, allow: [])
        #expect(refused.status == 1)
        #expect(refused.error.contains("127.0.0.1 is loopback"), "\(refused.error)")
        #expect(try LinksServer.shared.origin.hits(domain) == 0)
        #expect(try refresh(domain, allow: ["--webhook-allow", "10.0.0.0/8"]).error.contains("is loopback"))
        let fetched = try refresh(domain)
        #expect(fetched.status == 0, "\(fetched.error)")
    }

    @Test func aDomainWithoutAFileIsFetchedOnFirstMatch() throws {
        let (app, domain) = try registered()
        let origin = try LinksServer.shared.origin
        try origin.serve(domain, .init(type: "application/json; charset=utf-8", body: LinksServer.file(app, #"[{"/": "/a/*"}]"#)))
        let response = try LinksServer.match("https://\(domain)/a/1", app: app)
        #expect(response.decision == "open")
        #expect(response.fileSource == "fetch")
        #expect(response.json["file"]?["expiresAt"] != nil)
        #expect(origin.hits(domain) == 1)
    }

    @Test(arguments: [
        ("redirect", AssociationOrigin.Answer(status: 301, body: "", location: "https://elsewhere.example.com/aasa"), "a redirect; redirects are not followed"),
        ("oversize", AssociationOrigin.Answer(body: "{\"applinks\": {\"details\": []}, \"pad\": \"" + String(repeating: "x", count: 140_000) + "\"}"), "larger than 128 KiB"),
        ("content type", AssociationOrigin.Answer(type: "text/html", body: "{\"applinks\": {\"details\": []}}"), "not application/json"),
        ("status", AssociationOrigin.Answer(status: 403, body: "no"), "answered 403, not 200"),
        ("not JSON", AssociationOrigin.Answer(body: "<html>"), "is not a usable association file"),
    ])
    func refusedFetches(label: String, answer: AssociationOrigin.Answer, message: String) throws {
        let (app, domain) = try registered()
        try LinksServer.shared.origin.serve(domain, answer)
        let result = try refresh(domain)
        #expect(result.status == 1, "\(label)")
        #expect(result.error.contains(message), "\(label): \(result.error)")
        // The server refuses the same way and says why nothing answered.
        let response = try LinksServer.match("https://\(domain)/", app: app)
        #expect(response.status == 200)
        #expect(response.decision == "noMatch")
        #expect(response.json["reason"]?.stringValue?.contains(message) == true, "\(label): \(response.json)")
    }

    @Test func aFetchedFileIsKeptForTheTTLThenFetchedAgain() throws {
        let (app, domain) = try registered()
        let origin = try LinksServer.shared.origin
        try origin.serve(domain, .init(body: LinksServer.file(app, #"[{"/": "/one"}]"#)))
        #expect(try LinksServer.match("https://\(domain)/one", app: app).decision == "open")
        try origin.serve(domain, .init(body: LinksServer.file(app, #"[{"/": "/two"}]"#)))
        #expect(try LinksServer.match("https://\(domain)/two", app: app).decision == "noMatch")
        #expect(origin.hits(domain) == 1)
        Thread.sleep(forTimeInterval: LinksServer.ttl + 0.5)
        #expect(try LinksServer.match("https://\(domain)/two", app: app).decision == "open")
        #expect(origin.hits(domain) == 2)
    }

    @Test func refreshReplacesTheFileBeforeItExpires() throws {
        let (app, domain) = try registered()
        let origin = try LinksServer.shared.origin
        try origin.serve(domain, .init(body: LinksServer.file(app, #"[{"/": "/one"}]"#)))
        #expect(try LinksServer.match("https://\(domain)/one", app: app).decision == "open")
        try origin.serve(domain, .init(body: LinksServer.file(app, #"[{"/": "/two"}]"#)))
        let refreshed = try refresh(domain)
        #expect(refreshed.status == 0, "\(refreshed.error)")
        #expect(refreshed.output.hasPrefix("fetched \(domain) for \(TestServer.container): "), "\(refreshed.output)")
        let two = try LinksServer.match("https://\(domain)/two", app: app)
        #expect(two.decision == "open")
        #expect(two.json["file"]?["version"] == .int(2))
    }

    @Test func aStaleFileIsUsedWhileTheDomainCannotBeReached() throws {
        let (app, domain) = try registered()
        let origin = try LinksServer.shared.origin
        try origin.serve(domain, .init(body: LinksServer.file(app, #"[{"/": "/one"}]"#)))
        #expect(try LinksServer.match("https://\(domain)/one", app: app).decision == "open")
        try origin.serve(domain, .init(status: 500, body: ""))
        Thread.sleep(forTimeInterval: LinksServer.ttl + 0.5)
        #expect(try LinksServer.match("https://\(domain)/one", app: app).decision == "open")
        #expect(origin.hits(domain) == 2)
    }
}
