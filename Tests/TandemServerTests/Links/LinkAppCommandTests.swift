import Foundation
import Testing
import TandemCore

/// `tandem app add`, `tandem app domains` and `tandem links upload` through the built binary,
/// against a running server's data directory.
@Suite struct LinkAppCommandTests {
    @Test func appAddRegistersDomainsInOrderAndDomainsEditsThem() throws {
        let (app, domain) = LinksServer.names()
        let added = try LinksServer.tandem(["app", "add", app, "--container", TestServer.container,
                                            "--domains", "applinks:\(domain),applinks:*.\(domain)?mode=developer,applinks:\(domain)"])
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output == "\(app) in \(TestServer.container): applinks:\(domain) applinks:*.\(domain)\n")
        let changed = try LinksServer.tandem(["app", "domains", app, "--container", TestServer.container,
                                              "--add", "applinks:other.\(domain)", "--remove", "applinks:\(domain)"])
        #expect(changed.status == 0, "\(changed.error)")
        #expect(changed.output == "\(app) in \(TestServer.container): applinks:*.\(domain) applinks:other.\(domain)\n")
    }

    @Test(arguments: [
        (["ABCDE12345"], "is not an app ID"),
        (["abcde12345.com.example.x"], "is not an app ID"),
        (["ABCDE12345.com.example.x", "--domains", "example.com"], "is not an applinks entry"),
        (["ABCDE12345.com.example.x", "--domains", "applinks:example.com:8443"], "does not name a host"),
        (["ABCDE12345.com.example.x", "--domains", "applinks:a.*.example.com"], "does not name a host"),
    ])
    func appAddRefusesMalformedInput(arguments: [String], message: String) throws {
        let result = try LinksServer.tandem(["app", "add"] + arguments + ["--container", TestServer.container])
        #expect(result.status == 1)
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test func appDomainsOfAnUnknownAppFails() throws {
        let result = try LinksServer.tandem(["app", "domains", "ABCDE12345.com.example.nobody", "--container", TestServer.container, "--add", "applinks:a.com"])
        #expect(result.status == 1)
        #expect(result.error.contains("no app 'ABCDE12345.com.example.nobody'"), "\(result.error)")
    }

    @Test func linksUploadStoresAFileTheServerThenMatches() throws {
        let (app, domain) = LinksServer.names()
        #expect(try LinksServer.tandem(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)"]).status == 0)
        let path = try LinksServer.temporaryFile(LinksServer.file(app, #"[{"/": "/private/*", "exclude": true}, {"/": "/buy/*"}]"#))
        let uploaded = try LinksServer.tandem(["links", "upload", domain, path, "--container", TestServer.container])
        #expect(uploaded.status == 0, "\(uploaded.error)")
        #expect(uploaded.output.hasPrefix("uploaded \(domain) for \(TestServer.container): "), "\(uploaded.output)")

        let open = try LinksServer.match("https://\(domain)/buy/shoes", app: app)
        #expect(open.status == 200)
        #expect(open.decision == "open")
        #expect(open.ruleLocation == "applinks.details[0].components[1]")
        #expect(open.json["rule"]?["text"]?.stringValue == #"{"/":"/buy/*"}"#)
        #expect(open.fileDomain == domain)
        #expect(open.fileSource == "upload")
        #expect(open.json["entitlement"]?.stringValue == "applinks:\(domain)")
        #expect(try LinksServer.match("https://\(domain)/private/x", app: app).decision == "blocked")
        #expect(try LinksServer.match("https://\(domain)/help", app: app).decision == "noMatch")
    }

    @Test func linksUploadRefusesAFileThatDoesNotParse() throws {
        let (_, domain) = LinksServer.names()
        let path = try LinksServer.temporaryFile("{\n  \"applinks\": {\"details\": [],}\n}")
        let result = try LinksServer.tandem(["links", "upload", domain, path, "--container", TestServer.container])
        #expect(result.status == 1)
        #expect(result.error.contains("line 2, column"), "\(result.error)")
    }
}
