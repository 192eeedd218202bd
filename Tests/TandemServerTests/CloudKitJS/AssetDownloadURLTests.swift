import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// `downloadURL`s as capability URLs: CloudKit JS apps put them straight into `<img src>` or
/// `fetch` and never add `ckAPIToken`/`ckWebAuthToken`, so the URL itself must carry the right
/// to read one asset version for the reader it was issued to, until it expires.
@Suite("CloudKit JS: asset download URLs")
struct AssetDownloadURLTests {
    func upload(_ server: TestServer, _ bytes: Data, as person: Person? = nil) throws -> JSONValue {
        let tokens = try server.request("POST", server.databaseURL("assets/upload"),
                                        body: Data(JSONWriter.bytes(["tokens": [["recordType": "Photo", "fieldName": "photo"]]])),
                                        token: .some(person?.token ?? server.token))
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue, "\(tokens.text)")
        let uploaded = try server.request("POST", url, body: bytes, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        return try #require(uploaded.json["singleFile"], "\(uploaded.text)")
    }

    /// A record holding `bytes` in its `photo` field; its change tag and the asset's downloadURL.
    func photo(_ server: TestServer, _ bytes: Data) throws -> (name: String, tag: String, url: String) {
        let receipt = try upload(server, bytes)
        let name = unique("photo")
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: "Photo",
                                                                                   fields: ["photo": Body.field(receipt, "ASSET")])]))
        let record = saved.json.record(0)
        let url = try #require(record["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(saved.text)")
        return (name, record["recordChangeTag"]?.stringValue ?? "", url)
    }

    func parameter(_ url: String, _ name: String) -> String? {
        URLComponents(string: url)?.queryItems?.first { $0.name == name }?.value
    }

    func replacing(_ url: String, _ name: String, with value: String?) -> String {
        var components = URLComponents(string: url)!
        components.queryItems = (components.queryItems ?? []).compactMap { item in
            item.name == name ? value.map { URLQueryItem(name: name, value: $0) } : item
        }
        return components.string!
    }

    @Test("a downloadURL serves its bytes without credentials, expiring 1–2 hours after signing, cacheable until then")
    func signedURLWorksWithoutCredentials() throws {
        let server = try Shared.server
        let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let (_, _, url) = try photo(server, bytes)
        let now = Int64(Date().timeIntervalSince1970)
        let expires = try #require(parameter(url, "e").flatMap { Int64($0) })
        #expect(expires - now > 3500 && expires - now <= 7200, "expires in \(expires - now) s")
        #expect(parameter(url, "r") == server.userRecordName)
        let response = try server.request("GET", url, token: .some(nil))
        #expect(response.status == 200, "\(response.text)")
        #expect(response.body == bytes)
        #expect(response.headers["accept-ranges"] == "bytes")
        let cache = response.headers["cache-control"] ?? ""
        #expect(cache.hasPrefix("private, max-age="))
        let maxAge = Int64(cache.split(separator: "=").last?.split(separator: ",").first ?? "") ?? -1
        #expect(maxAge > 0 && maxAge <= expires - now + 1, "\(cache)")
        #expect(response.headers["etag"]?.isEmpty == false)
    }

    @Test("an asset is a download: never sniffed, never a page of this origin, whatever its bytes (C64)")
    func assetBytesAreServedAsADownloadThatRunsNothing() throws {
        let server = try Shared.server
        let page = Data("<!doctype html><script>alert(document.cookie)</script>".utf8)
        let (_, _, url) = try photo(server, page)
        let response = try server.request("GET", url, token: .some(nil))
        #expect(response.status == 200 && response.body == page, "\(response.text)")
        #expect(response.headers["content-type"] == "application/octet-stream")
        #expect(response.headers["content-disposition"] == "attachment")
        #expect(response.headers["x-content-type-options"] == "nosniff")
        let policy = response.headers["content-security-policy"] ?? ""
        #expect(policy.contains("sandbox") && policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"), "\(policy)")
        let part = try server.request("GET", url, token: .some(nil), headers: ["Range": "bytes=0-9"])
        #expect(part.status == 206 && part.headers["content-disposition"] == "attachment" && part.headers["x-content-type-options"] == "nosniff")
    }

    @Test("a URL changed in any part is refused like an asset that does not exist; without its signature it needs credentials",
          arguments: ["r", "e", "s", "path", "unsigned"])
    func tamperedURLIsRefused(part: String) throws {
        let server = try Shared.server
        let (_, _, url) = try photo(server, Data("tamper".utf8))
        let expires = try #require(parameter(url, "e").flatMap { Int64($0) }, "not a signed URL: \(url)")
        let changed: String
        switch part {
        case "r": changed = replacing(url, "r", with: "_someone-else")
        case "e": changed = replacing(url, "e", with: String(expires + 3600))
        case "s": changed = replacing(url, "s", with: String(repeating: "0", count: 32))
        case "path": changed = url.replacingOccurrences(of: "/photo/", with: "/thumbnail/")
        default: changed = replacing(url, "s", with: nil)
        }
        let response = try server.request("GET", changed, token: .some(nil))
        #expect(response.status == (part == "unsigned" ? 421 : 404), "\(response.text)")
    }

    @Test("an expired URL is refused with ACCESS_DENIED, telling the app to fetch the record again")
    func expiredURLIsRefused() throws {
        let server = try Shared.server
        let (_, _, url) = try photo(server, Data("old".utf8))
        let secret = try #require(FileManager.default.contents(atPath: server.dataDirectory + "/secret.key"))
        let signer = AssetURLSigner(secret: [UInt8](secret))
        let path = try #require(URLComponents(string: url)?.path)
        let past = Int64(Date().timeIntervalSince1970) - 60
        var expired = replacing(url, "e", with: String(past))
        expired = replacing(expired, "s", with: signer.signature(path: path, reader: server.userRecordName, expires: past))
        let response = try server.request("GET", expired, token: .some(nil))
        #expect(response.status == 403, "\(response.text)")
        #expect(response.json.serverErrorCode == "ACCESS_DENIED")
    }

    @Test("a URL is scoped to one asset version: once the field holds another asset the old URL is NOT_FOUND")
    func scopedToOneVersion() throws {
        let server = try Shared.server
        let (name, tag, old) = try photo(server, Data("version one".utf8))
        let receipt = try upload(server, Data("version two".utf8))
        let saved = try server.post("records/modify", Body.modify([Body.operation("update", name: name, recordType: "Photo", tag: tag,
                                                                                   fields: ["photo": Body.field(receipt, "ASSET")])]))
        let new = try #require(saved.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(saved.text)")
        #expect(try server.request("GET", old, token: .some(nil)).status == 404)
        let fresh = try server.request("GET", new, token: .some(nil))
        #expect(fresh.status == 200)
        #expect(fresh.body == Data("version two".utf8))
    }

    @Test("range requests: one range gets 206 with content-range, an unsatisfiable one 416, others the whole asset", arguments: [
        ("bytes=0-9", 206, "bytes 0-9/100", 0..<10),
        ("bytes=90-", 206, "bytes 90-99/100", 90..<100),
        ("bytes=-5", 206, "bytes 95-99/100", 95..<100),
        ("bytes=50-500", 206, "bytes 50-99/100", 50..<100),
        ("bytes=100-", 416, "bytes */100", 0..<0),
        ("bytes=9-2", 200, nil, 0..<100),
        ("bytes=0-1,5-6", 200, nil, 0..<100),
        ("items=0-1", 200, nil, 0..<100),
    ] as [(String, Int, String?, Range<Int>)])
    func ranges(header: String, status: Int, contentRange: String?, slice: Range<Int>) throws {
        let server = try Shared.server
        let bytes = Data((0..<100).map { UInt8($0) })
        let (_, _, url) = try photo(server, bytes)
        let response = try server.request("GET", url, token: .some(nil), headers: ["Range": header])
        #expect(response.status == status, "\(response.text)")
        #expect(response.headers["content-range"] == contentRange)
        if status != 416 { #expect(response.body == bytes.subdata(in: slice)) }
    }

    @Test("a participant's URL is signed for them; once the share is revoked they get no fresh URL and the old one stops")
    func revokedShareStopsURLs() throws {
        let server = try Shared.server
        let owner = try server.person("asset-owner")
        let reader = try server.person("asset-reader")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(reader)])
        try server.accept(note, as: reader)
        let receipt = try upload(server, Data("shared picture".utf8), as: owner)
        let child = try server.post("records/lookup", Body.lookup(["child"], zone: note.zone), as: owner, database: "private").json.record(0)
        let saved = try server.ownerModify(note, [Body.operation("update", name: "child", recordType: nil, tag: child["recordChangeTag"]?.stringValue,
                                                                 fields: ["photo": Body.field(receipt, "ASSET")])])
        #expect(saved.json.record(0).serverErrorCode == nil, "\(saved.text)")
        let seen = try server.sharedLookup(note, ["child"], as: reader).json.record(0)
        let url = try #require(seen["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(seen)")
        #expect(parameter(url, "r") == reader.recordName)
        #expect(try server.request("GET", url, token: .some(nil)).status == 200)

        let share = try server.shareRecord(note, as: owner)
        let revoked = try server.ownerModify(note, [Body.operation("update", name: note.shareName, recordType: nil,
                                                                   tag: share["recordChangeTag"]?.stringValue, extra: ["participants": []])])
        #expect(revoked.json.record(0).serverErrorCode == nil, "\(revoked.text)")
        let after = try server.sharedLookup(note, ["child"], as: reader)
        #expect(after.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"] == nil, "\(after.text)")
        #expect(try server.request("GET", url, token: .some(nil)).status == 404)
    }
}
