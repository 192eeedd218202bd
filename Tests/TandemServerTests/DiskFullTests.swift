import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Issue 14 item 12: a full disk answered `500 INTERNAL_ERROR "see the server log"`.
///
/// The database's disk is made full with the server's database cap (`--max-database-mib`,
/// SQLite's `max_page_count`): SQLite then fails the write with `SQLITE_FULL`, the very code it
/// returns for `ENOSPC`, through the same writer, rollback and error path. Uploads are spooled
/// to files, so their full disk is a real one: a 6 MiB tmpfs mounted over the data directory's
/// `assets/` in a mount namespace of the server's own (`unshare -m`; needs root, skipped
/// without it).
@Suite(.sqliteOnly("SQLite itself: the disk is filled through --max-database-mib, a SQLite setting")) struct DiskFullTests {
    static let bigText = String(repeating: "x", count: 100_000)

    @Test func aFullDiskRefusesWritesRetryablyLogsOnceAndKeepsServingReads() throws {
        let server = try TestServer(extraArguments: ["--max-database-mib", "1", "--quiet"])
        let zone = try server.makeZone("full")
        var saved: [String] = []
        var refusal: TestServer.Response?
        for i in 0..<40 {
            let response = try server.post("records/modify", Body.modify([Body.operation("create", name: "big\(i)", fields: ["text": Body.field(.string(Self.bigText))])], zone: zone))
            if response.status != 200 || response.json.records.first?.serverErrorCode != nil {
                refusal = response
                break
            }
            saved.append("big\(i)")
        }
        let full = try #require(refusal, "the 1 MiB cap was never reached")
        #expect(!saved.isEmpty)
        #expect(full.status == 503, "\(full.status) \(full.text)")
        #expect(full.json.serverErrorCode == "TRY_AGAIN_LATER")
        #expect(full.json["retryAfter"]?.int64Value == 30)
        #expect(full.json["reason"]?.stringValue?.contains("disk is full") == true, "\(full.text)")
        #expect(full.headers["retry-after"] ?? full.headers["Retry-After"] == "30")
        for i in 0..<4 {
            let again = try server.post("records/modify", Body.modify([Body.operation("create", name: "more\(i)", fields: ["text": Body.field(.string(Self.bigText))])], zone: zone))
            #expect(again.status == 503)
        }

        // Reads keep serving.
        let first = try #require(saved.first)
        let lookup = try server.post("records/lookup", ["zoneID": ["zoneName": .string(zone)], "records": [["recordName": .string(first)]]])
        #expect(lookup.status == 200)
        #expect(lookup.json.records.first?["fields"]?["text"]?["value"]?.stringValue == Self.bigText)
        let query = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "query": ["recordType": "Note"], "desiredKeys": []])
        #expect(query.status == 200)
        #expect(query.json.records.count == saved.count, "nothing of the refused writes was kept")

        // One report for five refusals.
        let log = server.standardError?.value ?? ""
        #expect(log.components(separatedBy: "disk full:").count - 1 == 1, "\(log)")
        #expect(!log.contains("internal error"))

        // Space comes back (records deleted free their pages): writes resume, no restart.
        let deletions = saved.map { JSONValue.object(["operationType": "forceDelete", "record": ["recordName": .string($0)]]) }
        let deleted = try server.post("records/modify", Body.modify(deletions, zone: zone))
        #expect(deleted.status == 200, "\(deleted.text.prefix(300))")
        let resumed = try server.post("records/modify", Body.modify([Body.operation("create", name: "after", fields: ["text": Body.field(.string(Self.bigText))])], zone: zone))
        #expect(resumed.status == 200, "\(resumed.text.prefix(300))")
        #expect(resumed.json.records.first?["recordChangeTag"] != nil)
    }

    /// Whether this run may mount a tmpfs in a mount namespace of its own (root, `unshare`).
    static let canMountTmpfs: Bool = {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "/bin/sh", "-c", "mount -t tmpfs -o size=1m tandem-probe /mnt"]
        guard (try? probe.run()) != nil else { return false }
        let probeEnd = probe.waitForTermination()
        return probeEnd.status == 0
    }()

    /// Audit B4: an upload meeting a full disk left its partial spool file (assets/tmp/
    /// tandem-body-XXXXXX) until the server stopped, so later small uploads failed too, and its
    /// 503 had no `Retry-After`. Now the file goes at once, the answer is the full-disk one
    /// (`TRY_AGAIN_LATER`, `retryAfter` 30 and the header, one log line a minute), and an
    /// upload that fits succeeds right after.
    @Test(.enabled(if: canMountTmpfs, "needs root and unshare -m to mount a 6 MiB tmpfs over the server's assets"))
    func aFullDiskUnderAnUploadAnswersRetryablyAndLeavesNoPartialFile() throws {
        let server = try TestServer(extraArguments: ["--quiet"]) { data in
            ["/usr/bin/unshare", "-m", "/bin/sh", "-c",
             "mkdir -p '\(data)/assets' && mount -t tmpfs -o size=6m,mode=0700 tandem-test '\(data)/assets' && exec \"$0\" \"$@\""]
        }
        let pid = try #require(server.process?.processIdentifier)
        func spoolFiles() throws -> [String] {
            let list = Process()
            list.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
            list.arguments = ["-t", String(pid), "-m", "--", "ls", "-A", server.dataDirectory + "/assets/tmp"]
            let out = Pipe()
            list.standardOutput = out
            try list.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            list.waitForTermination()
            return text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("tandem-body-") }
        }
        func upload(bytes: Int) throws -> TestServer.Response {
            let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]])
            let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue, "\(tokens.text)")
            let body = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ bytes) })
            return try server.request("POST", url, body: body, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        }

        for _ in 0..<2 {
            let full = try upload(bytes: 8 << 20)
            #expect(full.status == 503, "\(full.status) \(full.text)")
            #expect(full.json.serverErrorCode == "TRY_AGAIN_LATER")
            #expect(full.json["retryAfter"]?.int64Value == 30)
            #expect(full.json["reason"]?.stringValue?.contains("disk is full") == true, "\(full.text)")
            #expect(full.headers["retry-after"] == "30", "\(full.headers)")
            #expect(try spoolFiles().isEmpty, "the partial spool file is gone at once")
        }
        let log = server.standardError?.value ?? ""
        #expect(log.components(separatedBy: "disk full:").count - 1 == 1, "\(log)")

        // 4 MiB fit only if the failed uploads' partial files are gone.
        let fits = try upload(bytes: 4 << 20)
        #expect(fits.status == 200, "\(fits.text)")
        #expect(try spoolFiles().isEmpty)
    }
}
