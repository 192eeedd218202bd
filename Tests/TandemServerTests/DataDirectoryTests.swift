import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Issue 14 item 14: the data directory holds the records, assets and the token secret, so it
/// is the server user's alone: made 0700 with files 0600, and refused when others can write it.
@Suite(.sqliteOnly("SQLite itself: tandem.sqlite and its WAL in the data directory")) struct DataDirectoryTests {
    static func mode(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mode & 0o777) : -1
    }

    /// Every path under `directory` with its mode.
    static func modes(under directory: String) -> [(path: String, mode: Int, isDirectory: Bool)] {
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []
        return names.map { name in
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            return (name, mode(path), isDirectory.boolValue)
        }
    }

    @Test func serveMakesTheDataDirectoryAndItsFilesPrivate() throws {
        let server = try TestServer()
        let zone = try server.makeZone("private")
        _ = try server.create("r1", fields: ["title": Body.field("secret")], zone: zone)
        // An asset file too, through the upload URL the server hands out.
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]])
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        #expect(try server.request("POST", url, body: Data("asset bytes".utf8), token: .some(nil)).status == 200)
        #expect(Self.modes(under: server.dataDirectory).contains { $0.path.hasPrefix("assets/") && !$0.isDirectory && !$0.path.hasPrefix("assets/tmp") })
        #expect(Self.mode(server.dataDirectory) == 0o700)
        let entries = Self.modes(under: server.dataDirectory)
        #expect(entries.contains { $0.path == "tandem.sqlite" } && entries.contains { $0.path == "secret.key" })
        #expect(entries.contains { $0.path == "tandem.sqlite-wal" })
        for entry in entries {
            #expect(entry.mode & 0o077 == 0, "\(entry.path) has mode \(String(entry.mode, radix: 8))")
        }
    }

    static let unsafeModes = [0o777, 0o770, 0o730, 0o702, 0o1777]

    @Test(arguments: unsafeModes)
    func aDataDirectoryOthersCanWriteIsRefused(mode: Int) throws {
        let directory = NSTemporaryDirectory() + "tandem-unsafe-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, mode_t(mode)) == 0)
        let admin = try runTandem(["container", "create", "iCloud.com.example.unsafe", "--data", directory])
        #expect(admin.status != 0)
        #expect(admin.error.contains("refusing data directory") && admin.error.contains("writable by"), "\(admin.error)")
        #expect(throws: (any Error).self, "serve refuses to start") {
            let server = try TandemProcess.serve(dataDirectory: directory)
            server.process.terminate()
            server.process.waitForTermination()
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/tandem.sqlite"), "nothing written there")
    }

    /// A directory made by an earlier version (0755, files 0644) is narrowed to 0700 at start.
    @Test func anExistingReadableDirectoryIsNarrowed() throws {
        let directory = NSTemporaryDirectory() + "tandem-narrow-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, 0o755) == 0)
        let created = try runTandem(["container", "create", "iCloud.com.example.narrow", "--data", directory])
        #expect(created.status == 0, "\(created.error)")
        #expect(Self.mode(directory) == 0o700)
        #expect(Self.mode(directory + "/tandem.sqlite") == 0o600)
    }
}
