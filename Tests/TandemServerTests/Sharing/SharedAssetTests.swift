import Foundation
import Testing
import TandemCore

/// Assets in shared records: participants download them through the shared database's URLs
/// and, with READ_WRITE, upload new ones into the owner's zone.
@Suite("Shared assets")
struct SharedAssetTests {
    @Test("a writer uploads an asset into the shared zone, everyone on the share downloads it, a stranger cannot")
    func uploadAndDownload() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let writer = try server.person("writer")
        let reader = try server.person("reader")
        let stranger = try server.person("stranger")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(writer, "READ_WRITE"), Invite.email(reader)])
        try server.accept(note, as: writer)
        try server.accept(note, as: reader)

        // The reader may not upload into the owner's zone.
        let refused = try server.post("assets/upload", ["zoneID": note.sharedZoneID, "tokens": [["recordType": "Photo", "fieldName": "photo"]]],
                                      as: reader, database: "shared")
        #expect(refused.json.serverErrorCode == "ACCESS_DENIED")

        let tokens = try server.post("assets/upload", ["zoneID": note.sharedZoneID, "tokens": [["recordType": "Photo", "fieldName": "photo"]]],
                                     as: writer, database: "shared")
        let uploadURL = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue, "\(tokens.text)")
        let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let uploaded = try server.request("POST", uploadURL, body: bytes, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        let receipt = try #require(uploaded.json["singleFile"])
        let saved = try server.sharedModify(note, [Body.operation("create", name: "photo", recordType: "Photo",
                                                                  fields: ["photo": Body.field(receipt, "ASSET")],
                                                                  extra: ["parent": ["recordName": "note"]])], as: writer)
        #expect(saved.json.record(0).serverErrorCode == nil, "\(saved.text)")

        let seen = try server.sharedLookup(note, ["photo"], as: reader).json.record(0)
        let url = try #require(seen["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue)
        #expect(try server.request("GET", url, token: .some(reader.token)).body == bytes)
        // A stranger gets no URL of their own, and their credentials do not open the unsigned one
        // (the signed URL is a capability issued to the reader: whoever holds it may read).
        #expect(try server.sharedLookup(note, ["photo"], as: stranger).json.record(0)["fields"] == nil)
        #expect(try server.request("GET", String(url.prefix { $0 != "?" }), token: .some(stranger.token)).status == 404)
        // The owner reaches the same bytes through the private database.
        let mine = try server.post("records/lookup", Body.lookup(["photo"], zone: note.zone), as: owner, database: "private").json.record(0)
        let ownURL = try #require(mine["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue)
        #expect(try server.request("GET", ownURL, token: .some(owner.token)).body == bytes)
    }
}
