import Foundation
import Testing
import TandemCore

/// Assets: upload URL → POST bytes → receipt → record → downloadURL (CloudKit Web Services:
/// assets/upload; decisions D11).
@Suite struct AssetTests {
    func upload(_ server: TestServer, _ bytes: Data, field: String = "photo") throws -> JSONValue {
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": .string(field)]]])
        #expect(tokens.status == 200)
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        let uploaded = try server.request("POST", url, body: bytes, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        return try #require(uploaded.json["singleFile"])
    }

    @Test func uploadedAssetIsServedByItsDownloadURL() throws {
        let server = try Shared.server
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let receipt = try upload(server, bytes)
        #expect(receipt["size"]?.int64Value == 300_000)
        #expect(receipt["fileChecksum"]?.stringValue?.count == 64)
        let name = unique("photo")
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: "Photo", fields: ["photo": Body.field(receipt, "ASSET")])]))
        let asset = saved.json.record(0)["fields"]?["photo"]
        #expect(asset?["type"]?.stringValue == "ASSETID")
        let url = try #require(asset?["value"]?["downloadURL"]?.stringValue)
        let download = try server.request("GET", url)
        #expect(download.status == 200)
        #expect(download.body == bytes)
        // Without its signature the URL needs credentials: another user may not read it; nobody
        // without a token either.
        let unsigned = String(url.prefix { $0 != "?" })
        try TestServer.admin(["user", "add", "--email", "\(name)@example.com", "--data", server.dataDirectory])
        let stranger = try TestServer.admin(["token", "create", "--user", "\(name)@example.com", "--data", server.dataDirectory])
        #expect(try server.request("GET", unsigned).status == 200)
        #expect(try server.request("GET", unsigned, token: .some(stranger)).status == 404)
        #expect(try server.request("GET", unsigned, token: .some(nil)).status == 421)
    }

    @Test func recordSavedBackAsFetchedKeepsItsAsset() throws {
        let server = try Shared.server
        let receipt = try upload(server, Data("hello".utf8))
        let name = unique("keep")
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: "Photo", fields: ["photo": Body.field(receipt, "ASSET")])]))
        let record = saved.json.record(0)
        let again = try server.post("records/modify", Body.modify([Body.operation("update", name: name, recordType: "Photo", tag: record["recordChangeTag"]!.stringValue!,
                                                                                   fields: ["photo": record["fields"]!["photo"]!, "title": Body.field("t")])]))
        #expect(again.json.record(0).serverErrorCode == nil, "\(again.text)")
    }

    @Test func assetWithoutReceiptOrWithForgedChecksumIsRefused() throws {
        let server = try Shared.server
        let forged = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("forged"), recordType: "Photo",
                                                                                    fields: ["photo": Body.field(["fileChecksum": .string(String(repeating: "a", count: 64)), "size": 5], "ASSET")])]))
        #expect(forged.json.record(0).serverErrorCode == "BAD_REQUEST")
        var receipt = try upload(server, Data("abc".utf8)).objectValue!
        receipt["fileChecksum"] = .string(String(repeating: "b", count: 64))
        let mismatched = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("mismatch"), recordType: "Photo",
                                                                                        fields: ["photo": Body.field(.object(receipt), "ASSET")])]))
        #expect(mismatched.json.record(0).serverErrorCode == "BAD_REQUEST")
    }

    @Test func uploadURLIsSingleUse() throws {
        let server = try Shared.server
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]])
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        #expect(try server.request("POST", url, body: Data("one".utf8), token: .some(nil)).status == 200)
        #expect(try server.request("POST", url, body: Data("two".utf8), token: .some(nil)).status == 404)
        #expect(try server.request("POST", server.baseURL + "/upload/1/not-a-token", body: Data("x".utf8), token: .some(nil)).status == 404)
    }

    @Test func fiveMebibyteAssetRoundTrips() throws {
        let server = try Shared.server
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<(5 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let receipt = try upload(server, bytes)
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("big"), recordType: "Photo", fields: ["photo": Body.field(receipt, "ASSET")])]))
        let url = try #require(saved.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue)
        #expect(try server.request("GET", url).body == bytes)
    }
}
