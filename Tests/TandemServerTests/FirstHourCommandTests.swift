import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The commands a newcomer meets in the first hour (issue 22): listing what exists, watching
/// push from a shell with `tandem listen`, and the hint `tandem serve` prints on an empty
/// data directory.
@Suite struct FirstHourCommandTests {
    @Test func containerListAndAppListPrintWhatWasAdded() throws {
        let server = try Shared.server
        let containers = try runTandem(["container", "list", "--data", server.dataDirectory])
        #expect(containers.status == 0, "\(containers.error)")
        #expect(containers.output.split(separator: "\n").contains(Substring(TestServer.container)), "\(containers.output)")

        let app = "ABCDE12345.com.example.firsthour\(UUID().uuidString.prefix(6).lowercased())"
        let added = try runTandem(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:firsthour.example.com",
                                   "--data", server.dataDirectory])
        #expect(added.status == 0, "\(added.error)")
        let apps = try runTandem(["app", "list", "--container", TestServer.container, "--data", server.dataDirectory])
        #expect(apps.status == 0, "\(apps.error)")
        #expect(apps.output.contains("\(app) in \(TestServer.container): applinks:firsthour.example.com\n"), "\(apps.output)")
        let none = try runTandem(["app", "list", "--data", server.dataDirectory])
        #expect(none.status == 64 && none.error.contains("needs --container"), "\(none.error)")
    }

    /// A mistyped `--data` is an error naming the directory, and leaves nothing behind (F42).
    @Test(.sqliteOnly("a missing data directory is a missing SQLite store; PostgreSQL is named by its URL")) func listCommandsOnAMissingDataDirectoryRefuseAndMakeNothing() throws {
        let directory = NSTemporaryDirectory() + "tandem-test-missing-" + UUID().uuidString
        for command in [["container", "list"], ["user", "list"], ["app", "list", "--container", TestServer.container]] {
            let result = try runTandem(command + ["--data", directory])
            #expect(result.status == 1 && result.output.isEmpty, "\(command): \(result.status) \(result.output)")
            #expect(result.error.contains("no Tandem data in \(directory)"), "\(command): \(result.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory), "a listing made the data directory")
    }

    /// `app list` of a container that does not exist says so, as `app add` does (F43).
    @Test func appListOfAnUnknownContainerSaysSo() throws {
        let server = try Shared.server
        let result = try runTandem(["app", "list", "--container", "iCloud.com.example.nosuch", "--data", server.dataDirectory])
        #expect(result.status == 1 && result.output.isEmpty, "\(result.status) \(result.output)")
        #expect(result.error.contains("no container 'iCloud.com.example.nosuch'"), "\(result.error)")
    }

    @Test func listenPrintsTheHelloThenEachNotificationAsAJSONLine() throws {
        let server = try TestServer()
        let subscribed = try server.post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": [
            "subscriptionID": "everything", "subscriptionType": "database"]]]])
        #expect(subscribed.status == 200, "\(subscribed.text)")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestServer.binary)
        process.arguments = ["listen", "--token", server.token, "--container", TestServer.container, "--server", server.baseURL, "--count", "2"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Never hang the suite: a listener that hears nothing is stopped after a minute and fails below.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }

        let hello = out.fileHandleForReading.availableData   // blocks until the server's hello arrives
        #expect(String(decoding: hello, as: UTF8.self).hasPrefix("{\"type\":\"hello\""), "\(String(decoding: hello, as: UTF8.self))")
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: "heard", recordType: "Note",
                                                                                  fields: ["title": Body.field("hello")])]))
        #expect(saved.status == 200, "\(saved.text)")
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        let processEnd = process.waitForTermination()
        let text = String(decoding: hello + rest, as: UTF8.self)
        #expect(processEnd.status == 0, "\(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines.last == "", "two lines, each ending with a newline: \(text)")
        let notification = lines.count > 1 ? (try? JSONParser.parse(Array(lines[1].utf8))) ?? .null : .null
        #expect(notification["type"]?.stringValue == "notification", "\(text)")
        #expect(notification["notification"]?["subscriptionID"]?.stringValue == "everything", "\(text)")
    }

    @Test func listenWithARefusedTokenFailsAndSaysWhy() throws {
        let server = try Shared.server
        let result = try runTandem(["listen", "--token", "tdu_not-a-token", "--container", TestServer.container, "--server", server.baseURL])
        #expect(result.status == 1, "\(result.output)")
        #expect(!result.error.isEmpty && result.output.isEmpty, "\(result.error)")
    }

    @Test func serveOnAnEmptyDataDirectoryPrintsWhatToDoNextUntilAContainerExists() throws {
        let directory = NSTemporaryDirectory() + "tandem-test-" + UUID().uuidString
        let server = try TestServer(dataDirectory: directory)
        // On PostgreSQL (the test store switch) it says "the store is empty" and adds --store (P57).
        let hint = TestStore.isPostgres ? "no containers yet: the store is empty. Next, in another terminal:"
            : "no containers yet: this data directory is empty. Next, in another terminal:"
        #expect(try eventually(seconds: 20) { server.standardError?.value.contains(hint) == true }, "\(server.standardError?.value ?? "")")
        let log = server.standardError?.value ?? ""
        #expect(log.contains("tandem container create iCloud.com.example.notes --data \(directory)"), "\(log)")
        #expect(log.contains("tandem token create --user you@example.com --data \(directory)"), "\(log)")
        #expect(log.components(separatedBy: hint).count == 2, "printed once")

        try TestServer.admin(["container", "create", "iCloud.com.example.firstrun", "--data", directory])
        try server.start()
        #expect(try eventually(seconds: 20) { server.standardError?.value.contains("tandem serving on") == true })
        #expect(server.standardError?.value.contains(hint) == false, "\(server.standardError?.value ?? "")")
    }

    /// A data directory the shell would split is quoted in the hint, so its lines can be pasted (F46).
    @Test func theHintQuotesADataDirectoryWithASpace() throws {
        let directory = NSTemporaryDirectory() + "tandem test " + UUID().uuidString
        ExitCleanup.removeAtExit(directory)
        let server = try TestServer(dataDirectory: directory)
        #expect(try eventually(seconds: 20) { server.standardError?.value.contains("tandem token create") == true }, "\(server.standardError?.value ?? "")")
        let log = server.standardError?.value ?? ""
        let end = TestStore.isPostgres ? " --store " : "\n"
        #expect(log.contains("tandem container create iCloud.com.example.notes --data '\(directory)'" + end), "\(log)")
    }
}
