import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The admin CLI refuses bad input with a clear message and a non-zero exit, and works while the
/// server runs.
@Suite struct AdminCommandTests {
    static let refusals: [(String, [String], String)] = [
        ("container with a space", ["container", "create", "with space"], "container ID"),
        ("container with a query", ["container", "create", "q?x=1"], "container ID"),
        ("container of dots", ["container", "create", ".."], "container ID"),
        ("email without @", ["user", "add", "--email", "nobody"], "not an email"),
        ("email with a newline", ["user", "add", "--email", "a@b.co\nx"], "not an email"),
        ("token for an unknown user", ["token", "create", "--user", "ghost@example.com"], "no user"),
        ("API token with a user", ["token", "create", "--api", "--container", "iCloud.com.example.tests", "--user", "a@b.co"], "drop --user"),
        ("unknown command", ["frobnicate"], "unknown command"),
        ("missing value", ["user", "add", "--email"], "needs a value"),
        // A mistyped option is named, not ignored (review 47).
        ("mistyped option", ["user", "add", "--emial", "typo@example.com"], "user takes no --emial"),
        ("option of another command", ["container", "list", "--email", "a@b.co"], "container takes no --email"),
        ("mistyped serve option", ["serve", "--bus-pasword", "x"], "serve takes no --bus-pasword"),
        ("mistyped listen option", ["listen", "--tokn", "x"], "listen takes no --tokn"),
        // Review 49: `--yes=no` removed the account; `--froce` was "needs a value"; a second `--email` won silently.
        ("a switch given a value", ["user", "remove", "ghost@example.com", "--yes=no"], "--yes is a switch: give it alone (or =true / =false), not '=no'"),
        ("a mistyped switch", ["migrate", "--froce", "--from", "/nonexistent", "--to", "/nonexistent2"], "migrate takes no --froce"),
        ("an option given twice", ["user", "add", "--email", "a@example.com", "--email", "b@example.com"], "--email is given 2 times"),
        ("an expiry on a user's token", ["token", "create", "--user", "ghost@example.com", "--expires", "1h"], "--expires is not for a user's token"),
        ("an expiry on an API token", ["token", "create", "--api", "--container", "iCloud.com.example.tests", "--expires", "1h"],
         "--expires is not for an API token"),
        ("an origin on an admin token", ["token", "create", "--admin", "--origin", "https://app.example"], "--origin is not for an admin token"),
    ]

    /// Every option `tandem --help` shows for a command is one the command takes: the refusal of
    /// an unknown option lists them (`serve --link-lifetime` was shown but refused, and refused
    /// in `--config` too, until this test).
    @Test func everyOptionTheUsageShowsIsTaken() throws {
        let help = try runTandem(["--help"]).output
        var shown: [String: Set<String>] = [:]
        var command: String?
        for line in help.split(separator: "\n") {
            if line.hasPrefix("  tandem ") {
                command = String(line.split(separator: " ")[1])
            } else if !line.hasPrefix("          ") {
                command = nil
            }
            guard let command else { continue }
            for match in line.matches(of: /--([a-z][a-z-]*)/) { shown[command, default: []].insert(String(match.1)) }
        }
        #expect(shown.count >= 10 && shown["serve", default: []].contains("link-lifetime"), "\(shown)")
        for (command, options) in shown.sorted(by: { $0.key < $1.key }) {
            let refused = try runTandem([command, "--zz-not-an-option=1"])
            #expect(refused.status == 64 && refused.error.hasPrefix("\(command) takes no --zz-not-an-option"), "\(refused.error)")
            let taken = Set(refused.error.matches(of: /--([a-z][a-z-]*)/).map { String($0.1) })
            #expect(options.subtracting(taken).isEmpty, "\(command) shows \(options.subtracting(taken).sorted()) but does not take them")
        }
    }

    @Test(arguments: refusals.map(\.0))
    func badAdminInputIsRefused(label: String) throws {
        let server = try Shared.server
        let (_, arguments, message) = Self.refusals.first { $0.0 == label }!
        let result = try runTandem(arguments + ["--data", server.dataDirectory])
        #expect(result.status != 0)
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test(arguments: [[], ["help"], ["--help"], ["serve", "--help"], ["user", "add", "-h"]])
    func helpPrintsTheUsageAndSucceeds(arguments: [String]) throws {
        let result = try runTandem(arguments)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("tandem serve [--host"), "\(result.output)")
    }

    /// QA: with standard error unwritable (`2>/dev/full`), a refusal used to crash (SIGILL in
    /// `FileHandle.write`) instead of exiting with its status.
    @Test func aRefusalExitsCleanlyWhenStandardErrorCannotBeWritten() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestServer.binary)
        process.arguments = ["frobnicate"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        try process.run()
        let processEnd = process.waitForTermination()
        #expect(!processEnd.signalled, "killed by signal \(processEnd.status)")
        #expect(processEnd.status == 64, "a usage error (EX_USAGE)")
    }

    @Test func duplicateEmailIsRefusedWhateverItsCase() throws {
        let server = try Shared.server
        let result = try runTandem(["user", "add", "--email", "ADA@example.com", "--data", server.dataDirectory])
        #expect(result.status == 1)
        #expect(result.error.contains("already exists"))
    }

    @Test func tokenPrintsOnlyTheTokenOnItsLastLine() throws {
        let server = try Shared.server
        let result = try runTandem(["token", "create", "--user", server.userRecordName, "--data", server.dataDirectory])
        #expect(result.status == 0)
        let token = result.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(token.hasPrefix("tdu_") && token.count > 40)
        #expect(try server.get("users/current", token: .some(token), database: "public").status == 200)
    }
}
