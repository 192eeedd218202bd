import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The share landing page `/share/{shortGUID}`, its thumbnail and the
/// apple-app-site-association file: over plain HTTP, and end to end in headless Chromium
/// (Tests/Browser/landing_page.py; `scripts/bootstrap --test` installs Chromium).
@Suite struct LandingPageBrowserTests {
    /// A 120×80 PNG of orange and blue stripes.
    static let png = Data(base64Encoded: """
        iVBORw0KGgoAAAANSUhEUgAAAHgAAABQCAIAAABd+SbeAAAAnklEQVR42u3ZQQ0AMAgEQeSgrkoqDDlIqAtC0klWwfw4om9qoEAAGrRAgwZNATRogV4Lnac0EGjQoAUaNGgEoEEL9F5ox7GtA7RAgwZNATRogQbtZ+g+tnWAFmjQoAUatECD9jOUrQO0QIMGLdCgBRq0n6FsHaAFGjRogQYt0KD9DGXrAC3QoEELNGiBBu1nKFsHaIEGDVqgQQs06C97T31oybRGZWUAAAAASUVORK5CYII=
        """)!

    struct CreatedShare {
        var shortGUID: String
        var recordName: String
        var recordChangeTag: String
        var zone: String
    }

    /// Creates a root record and its share in one records/modify, in a new zone of the test
    /// user's private database.
    static func share(_ server: TestServer, title: String, publicPermission: String, thumbnail: Data? = nil) throws -> CreatedShare {
        let zone = try server.makeZone("landing")
        var fields: JSONObject = ["cloudkit.title": Body.field(.string(title))]
        if let thumbnail { fields["cloudkit.thumbnailImageData"] = Body.field(.string(thumbnail.base64EncodedString()), "BYTES") }
        let root = unique("trip")
        let name = unique("share")
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: root, recordType: "Trip", fields: ["name": Body.field(.string(title))]),
            Body.operation("create", name: name, recordType: "cloudkit.share", fields: fields,
                           extra: ["forRecord": ["recordName": .string(root)], "publicPermission": .string(publicPermission)]),
        ], zone: zone))
        let record = response.json.record(1)
        guard response.status == 200, let guid = record["shortGUID"]?.stringValue, let tag = record["recordChangeTag"]?.stringValue else {
            throw TestFailure("share create failed: \(response.status) \(response.text)")
        }
        return CreatedShare(shortGUID: guid, recordName: name, recordChangeTag: tag, zone: zone)
    }

    /// A second user in the server's data directory; returns their record name and token.
    static func user(_ server: TestServer, _ prefix: String, name: String) throws -> (recordName: String, token: String) {
        let email = "\(unique(prefix))@example.com"
        let recordName = try TestServer.admin(["user", "add", "--email", email, "--name", name, "--data", server.dataDirectory])
        let token = try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory])
        return (recordName, token)
    }

    static func page(_ server: TestServer, _ guid: String) throws -> TestServer.Response {
        try server.request("GET", "\(server.baseURL)/share/\(guid)", token: .some(nil))
    }

    // MARK: Plain HTTP

    @Test func associationFileListsConfiguredAppIDsForShareLinks() throws {
        let server = try TestServer(extraArguments: ["--app-ids", "ABCDE12345.com.example.trips, VWXYZ67890.com.example.trips.beta"])
        let response = try server.request("GET", "\(server.baseURL)/.well-known/apple-app-site-association", token: .some(nil))
        #expect(response.status == 200)
        #expect(response.headers["content-type"]?.hasPrefix("application/json") == true, "\(response.headers)")
        let details = try #require(response.json["applinks"]?["details"]?.arrayValue)
        #expect(details.count == 1)
        #expect(details[0]["appIDs"] == ["ABCDE12345.com.example.trips", "VWXYZ67890.com.example.trips.beta"])
        let components = try #require(details[0]["components"]?.arrayValue)
        #expect(components.map { $0["/"]?.stringValue } == ["/share/*", "/activity/*"])
    }

    @Test func hostileTitleIsEscapedEverywhereOnThePage() throws {
        let server = try Shared.server
        let hostile = #"<script>alert("x")</script> & 'quoted' <img src=x onerror=alert(1)>"#
        let created = try Self.share(server, title: hostile, publicPermission: "READ_ONLY")
        let page = try Self.page(server, created.shortGUID)
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let html = page.text
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<img src=x"))
        let escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39; &lt;img src=x onerror=alert(1)&gt;"
        #expect(html.contains("<title>\(escaped)</title>"))
        #expect(html.contains("<h1>\(escaped)</h1>"))
        #expect(html.contains("<meta property=\"og:title\" content=\"\(escaped)\">"))
        // The only script on the page is the page's own file (no inline script).
        #expect(html.components(separatedBy: "<script").count == 2)
    }

    /// Thumbnail bytes and the content type the server must send them with.
    enum ImageSample: String, CaseIterable {
        case png, jpeg, gif, webp, unknown

        var bytes: Data {
            let padding = [UInt8](repeating: 7, count: 32)
            switch self {
            case .png: return LandingPageBrowserTests.png
            case .jpeg: return Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + padding)
            case .gif: return Data("GIF89a".utf8 + padding)
            case .webp: return Data("RIFF".utf8 + [0, 0, 0, 0] + "WEBPVP8 ".utf8 + padding)
            case .unknown: return Data("not an image".utf8 + padding)
            }
        }

        var contentType: String {
            switch self {
            case .png: "image/png"
            case .jpeg: "image/jpeg"
            case .gif: "image/gif"
            case .webp: "image/webp"
            case .unknown: "application/octet-stream"
            }
        }
    }

    @Test(arguments: ImageSample.allCases)
    func thumbnailContentTypeIsSniffedFromItsBytes(sample: ImageSample) throws {
        let server = try Shared.server
        let created = try Self.share(server, title: "Sniffed", publicPermission: "READ_ONLY", thumbnail: sample.bytes)
        let response = try server.request("GET", "\(server.baseURL)/share/\(created.shortGUID)/thumbnail", token: .some(nil))
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == sample.contentType)
        #expect(response.body == sample.bytes)
        // The sharer's bytes are never sniffed into a page, nor run as one (C33).
        #expect(response.headers["x-content-type-options"] == "nosniff")
        #expect(response.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'; sandbox")
    }

    @Test func privateShareHasNoThumbnailAndItsPageNamesNothing() throws {
        let server = try Shared.server
        let created = try Self.share(server, title: "Secret plans", publicPermission: "NONE", thumbnail: Self.png)
        let thumbnail = try server.request("GET", "\(server.baseURL)/share/\(created.shortGUID)/thumbnail", token: .some(nil))
        #expect(thumbnail.status == 404)
        #expect(thumbnail.json.serverErrorCode == "NOT_FOUND", "\(thumbnail.text)")
        let page = try Self.page(server, created.shortGUID)
        #expect(page.status == 200)
        for secret in ["Secret plans", "Ada", "Lovelace", "/thumbnail", "og:image", "id=\"accept\""] {
            #expect(!page.text.contains(secret), "the private page shows \(secret)")
        }
    }

    // MARK: In a browser

    /// Tests/Browser/landing_page.py in the source tree.
    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/landing_page.py").path
    }

    @Test(.timeLimit(.minutes(5)))
    func landingPageWorksInHeadlessChromium() throws {
        let server = try Shared.server
        let title = "Trip plan"
        let open = try Self.share(server, title: title, publicPermission: "READ_ONLY", thumbnail: Self.png)
        let closed = try Self.share(server, title: "Surprise party", publicPermission: "NONE", thumbnail: Self.png)
        var requestable = try Self.share(server, title: "Book club", publicPermission: "NONE")
        let updated = try server.post("records/modify", Body.modify([
            Body.operation("update", name: requestable.recordName, recordType: "cloudkit.share", tag: requestable.recordChangeTag,
                           extra: ["allowsAccessRequests": true]),
        ], zone: requestable.zone))
        #expect(updated.json.record(0)["allowsAccessRequests"]?.boolValue == true, "\(updated.text)")
        requestable.recordChangeTag = updated.json.record(0)["recordChangeTag"]?.stringValue ?? ""
        let accepter = try Self.user(server, "grace", name: "Grace Hopper")
        let requester = try Self.user(server, "alan", name: "Alan Turing")

        // TANDEM_BROWSER_SCREENSHOTS=DIR keeps the screenshots there and prints the driver's report.
        let keep = ProcessInfo.processInfo.environment["TANDEM_BROWSER_SCREENSHOTS"]
        let screenshots = keep.map { ["--screenshots", $0] } ?? []
        let run = try Self.python([
            Self.driver, "--server", server.baseURL, "--container", TestServer.container,
            "--owner-name", "Ada Lovelace", "--owner-token", server.token, "--owner-zone", requestable.zone,
            "--public", open.shortGUID, "--title", title, "--accepter-token", accepter.token,
            "--private", closed.shortGUID, "--private-title", "Surprise party",
            "--requestable", requestable.shortGUID, "--requestable-title", "Book club",
            "--requestable-share", requestable.recordName, "--requester", requester.recordName, "--requester-token", requester.token,
        ] + screenshots, timeout: 240)
        if keep != nil { print(run.output) }
        #expect(run.status == 0, "landing_page.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
    }

    /// Runs `python3 arguments`, killing it after `timeout` seconds. A driver given `--data DIR`
    /// also gets the server's `--store` under `TANDEM_TEST_STORE=postgres` (P38; Tests/Browser/cdp.py
    /// `store_arguments` hands both to the `tandem` commands it runs).
    static func python(_ arguments: [String], timeout: TimeInterval) throws -> (status: Int32, output: String, errors: String) {
        let arguments = try TestStore.adding(arguments)
        let directory = NSTemporaryDirectory() + "tandem-browser-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Files rather than pipes: nothing can block on a full pipe, and output survives a kill.
        let out = directory + "/stdout", err = directory + "/stderr"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u"] + arguments
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        process.standardInput = FileHandle.nullDevice
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        try process.run()
        var timedOut = false
        if done.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            // The driver stops its Chromium when interrupted.
            kill(process.processIdentifier, SIGINT)
            if done.wait(timeout: .now() + 10) == .timedOut { process.terminate(); done.wait() }
        }
        let output = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        var errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        if timedOut { errors += "\n(killed after \(Int(timeout)) s)" }
        return (process.terminationStatus, output, errors)
    }
}
