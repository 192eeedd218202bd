import Foundation
import Testing
import Tandem
import TandemTestSupport

@Suite("LocalStore assets")
struct LocalStoreAssetTests {
    @Test func aFileChosenOfflineIsKeptAndUploadedWhenTheRecordIsSent() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let file = URL(fileURLWithPath: NSTemporaryDirectory() + unique("photo") + ".jpg")
        ExitCleanup.removeAtExit(file.path)
        let bytes = Data((0..<20_000).map { UInt8($0 % 251) })
        try bytes.write(to: file)
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("with-photo")))
        note["text"] = "with a photo"
        note["photo"] = Asset(fileURL: file)
        try ada.save([note])
        #expect((try ada.record(for: note.recordID)?["photo"] as? Asset)?.fileURL == file, "the chosen file is kept until the send")

        try await ada.sync()
        #expect(!ada.hasUnsentChanges)
        let fetched = try await server.ada.privateDatabase.record(for: note.recordID)
        let asset = try #require(fetched["photo"] as? Asset)
        #expect(asset.size == Int64(bytes.count))
        let copy = URL(fileURLWithPath: NSTemporaryDirectory() + unique("copy"))
        ExitCleanup.removeAtExit(copy.path)
        try await server.ada.download(asset, to: copy)
        #expect(try Data(contentsOf: copy) == bytes)
        #expect((try ada.record(for: note.recordID)?["photo"] as? Asset)?.size == Int64(bytes.count), "the row holds the uploaded asset")
    }
}

@Suite("Asset cache")
struct AssetCacheTests {
    @Test func anAssetIsDownloadedOnceAndServedFromTheCacheOffline() async throws {
        let server = try TestServer()
        let file = URL(fileURLWithPath: NSTemporaryDirectory() + unique("doc"))
        ExitCleanup.removeAtExit(file.path)
        let bytes = Data("cached bytes".utf8)
        try bytes.write(to: file)
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: "doc"))
        note["attachment"] = Asset(fileURL: file)
        try await server.ada.privateDatabase.save(note)
        let asset = try #require(try await server.ada.privateDatabase.record(for: note.recordID)["attachment"] as? Asset)

        let cacheDirectory = URL(fileURLWithPath: NSTemporaryDirectory() + unique("cache"))
        ExitCleanup.removeAtExit(cacheDirectory.path)
        let cache = AssetCache(container: server.ada, directory: cacheDirectory)
        let first = try await cache.file(for: asset)
        #expect(try Data(contentsOf: first) == bytes)
        server.kill()
        let second = try await cache.file(for: asset)   // no server needed
        #expect(second == first)
        #expect(try Data(contentsOf: second) == bytes)
        await #expect(throws: TandemError.self) { try await cache.file(for: Asset(fileURL: file)) }
    }
}
