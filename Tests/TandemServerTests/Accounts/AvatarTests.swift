import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Avatars over HTTP against a real server (issue 16 item 1; decisions A48): set through
/// `POST /auth/1/{container}/account/avatar`, checked by size and signature, served through
/// signed `/avatars/1/` URLs where the person's name shows, erased with the account.
@Suite("Avatars")
struct AvatarTests {
    static let server = LazyTestServer(arguments: TestServer.cheapHash)

    /// A 1×1 PNG, and the starts of a JPEG (JFIF) and a WebP (RIFF … WEBP VP8) file: the server
    /// checks signatures, it does not decode.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xD9])
    static let webp = Data(Array("RIFF".utf8) + [0x1A, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [UInt8](repeating: 0x2A, count: 18))
    static let gif = Data(Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x3B])

    func upload(_ server: TestServer, _ bytes: Data, type: String, token: String) throws -> TestServer.Response {
        try server.request("POST", "\(server.baseURL)/auth/1/\(TestServer.container)/account/avatar", body: bytes, token: .some(token),
                           headers: ["Content-Type": type])
    }

    func avatarURL(_ response: TestServer.Response) -> String? { response.json["avatarURL"]?.stringValue }

    func files(_ server: TestServer) -> [String] {
        let root = server.dataDirectory + "/avatars"
        let all = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? []
        return all.filter { !$0.hasPrefix("tmp") && $0.split(separator: "/").count == 3 }.map { String($0.split(separator: "/").last!) }.sorted()
    }

    /// The checksum a signed avatar URL names.
    func checksum(_ url: String) -> String { String(url.split(separator: "?")[0].split(separator: "/").last!) }

    @Test func setServeReplaceAndRemoveAnAvatar() throws {
        let server = try Self.server.server
        let ada = try server.person("ada")
        // Bytes of this test's own: the suite's other tests upload pictures in parallel, and
        // identical bytes share a file.
        let (png, jpeg) = (Self.png + Data(ada.recordName.utf8), Self.jpeg + Data(ada.recordName.utf8))
        let set = try upload(server, png, type: "image/png", token: ada.token)
        #expect(set.status == 200, "\(set.text)")
        let url = try #require(avatarURL(set))
        #expect(url.hasPrefix("\(server.baseURL)/avatars/1/\(ada.recordName)/") && url.contains("&r=\(ada.recordName)&s="), "\(url)")
        #expect(set.json["userRecordName"]?.stringValue == ada.recordName && set.json["invitationEmails"] == true)
        #expect(files(server).contains(checksum(url)))

        // A capability URL: no credentials, the checked type, and nothing a browser would sniff.
        let served = try server.request("GET", url, token: .some(nil), headers: ["Origin": "https://app.example"])
        #expect(served.status == 200 && served.body == png)
        #expect(served.headers["content-type"] == "image/png" && served.headers["x-content-type-options"] == "nosniff")
        #expect(served.headers["access-control-allow-origin"] == "*")
        #expect(served.headers["cache-control"]?.hasPrefix("private, max-age=") == true)

        // Shown wherever the person sees their own account.
        let current = try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(ada.token))
        #expect(current.json["avatarURL"]?.stringValue == url)
        let caller = try server.request("GET", server.databaseURL("users/caller", database: "public"), token: .some(ada.token))
        #expect(caller.json["users"]?.arrayValue?.first?["avatarURL"]?.stringValue == url)
        #expect(avatarURL(try server.auth("account", bearer: ada.token)) == url)

        // Replaced: the old URL and its file go, the new one serves the new type.
        let replaced = try upload(server, jpeg, type: "image/jpeg; charset=binary", token: ada.token)
        let newURL = try #require(avatarURL(replaced), "\(replaced.text)")
        #expect(newURL != url)
        #expect(try server.request("GET", url, token: .some(nil)).json.serverErrorCode == "NOT_FOUND")
        #expect(try server.request("GET", newURL, token: .some(nil)).headers["content-type"] == "image/jpeg")
        #expect(!files(server).contains(checksum(url)) && files(server).contains(checksum(newURL)))

        let removed = try server.auth("account/avatar/remove", [:], bearer: ada.token)
        #expect(removed.status == 200 && avatarURL(removed) == nil, "\(removed.text)")
        #expect(try server.request("GET", newURL, token: .some(nil)).status == 404)
        #expect(!files(server).contains(checksum(newURL)))
        #expect(try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(ada.token)).json["avatarURL"] == nil)
        #expect(try server.auth("account/avatar/remove", [:], bearer: ada.token).status == 200, "removing none is fine")
        #expect(try server.auth("account/avatar", bearer: ada.token, method: "GET").status == 405)
    }

    static let refusals: [(label: String, type: String, bytes: Data, status: Int, code: String)] = [
        ("a type that is not an image", "text/plain", png, 415, "BAD_REQUEST"),
        ("no content type", "", png, 415, "BAD_REQUEST"),
        ("GIF, not accepted", "image/gif", gif, 415, "BAD_REQUEST"),
        ("JPEG bytes sent as PNG", "image/png", jpeg, 400, "BAD_REQUEST"),
        ("GIF bytes sent as WebP", "image/webp", gif, 400, "BAD_REQUEST"),
        ("a PNG signature cut short", "image/png", png.prefix(5), 400, "BAD_REQUEST"),
        ("no bytes", "image/png", Data(), 400, "BAD_REQUEST"),
    ]

    @Test(arguments: refusals.map(\.label))
    func aBadPictureIsRefusedAndChangesNothing(label: String) throws {
        let row = Self.refusals.first { $0.label == label }!
        let server = try Self.server.server
        let person = try server.person("refused")
        let before = try #require(avatarURL(try upload(server, Self.webp, type: "image/webp", token: person.token)))
        let request: TestServer.Response
        if row.type.isEmpty {
            // URLSession gives a body a content type; a raw request can have none.
            let socket = try RawSocket(port: server.port)
            socket.send("POST /auth/1/\(TestServer.container)/account/avatar HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(person.token)\r\n"
                        + "Content-Length: \(row.bytes.count)\r\nConnection: close\r\n\r\n")
            socket.send([UInt8](row.bytes))
            let reply = socket.readUntilClosed(seconds: 10)
            request = TestServer.Response(status: reply.status ?? 0, body: Data(reply.body.utf8), headers: [:])
        } else {
            request = try upload(server, row.bytes, type: row.type, token: person.token)
        }
        #expect(request.status == row.status && request.json.serverErrorCode == row.code, "\(label): \(request.status) \(request.text)")
        #expect(avatarURL(try server.auth("account", bearer: person.token)).map(checksum) == checksum(before))
    }

    @Test func anAvatarUploadIsRefusedBeforeItsBodyWithoutAUserOrOverTheLimit() throws {
        let server = try Self.server.server
        let person = try server.person("admission")
        let heads: [(authorization: String?, length: Int, status: Int, code: String)] = [
            (nil, 1000, 421, "AUTHENTICATION_REQUIRED"),
            ("Bearer forged", 1000, 401, "AUTHENTICATION_FAILED"),
            ("Bearer \(person.token)", (1 << 20) + 1, 413, "LIMIT_EXCEEDED"),
        ]
        for head in heads {
            let socket = try RawSocket(port: server.port)
            var text = "POST /auth/1/\(TestServer.container)/account/avatar HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\nContent-Length: \(head.length)\r\n"
            if let authorization = head.authorization { text += "Authorization: \(authorization)\r\n" }
            socket.send(text + "\r\n")
            // The body never comes: an answer at all means it was given from the head.
            let reply = socket.readUntilClosed(seconds: 20)
            #expect(reply.status == head.status && reply.body.contains(head.code), "\(reply.text)")
            #expect(reply.closed, "answered and closed without the body (\(reply.seconds) s)")
        }
    }

    @Test func othersSeeTheAvatarOnlyWhereTheNameShows() throws {
        let server = try Self.server.server
        let owner = try server.person("pictured")
        let reader = try server.person("reader")
        #expect(try upload(server, Self.png, type: "image/png", token: owner.token).status == 200)
        func lookups() throws -> [String?] {
            let byID = try server.post("users/lookup/id", ["users": [["userRecordName": .string(owner.recordName)]]], as: reader, database: "public")
            let byEmail = try server.post("users/lookup/email", ["users": [["emailAddress": .string(owner.email)]]], as: reader, database: "public")
            let discovered = try server.post("users/discover", ["lookupInfos": [["userRecordName": .string(owner.recordName)]]], as: reader, database: "public")
            return [byID, byEmail, discovered].map { $0.json["users"]?.arrayValue?.first?["avatarURL"]?.stringValue }
        }
        #expect(try lookups() == [nil, nil, nil], "not discoverable: no name, no picture")

        #expect(try server.tandem("users/discoverability", ["discoverable": true], as: owner).status == 200)
        let urls = try lookups()
        #expect(urls.allSatisfy { $0?.contains("&r=\(reader.recordName)&s=") == true }, "\(urls)")
        let url = try #require(urls[0])
        #expect(try server.request("GET", url, token: .some(nil)).body == Self.png)

        // The signature binds path, reader and expiry.
        let forged = url.replacingOccurrences(of: "&r=\(reader.recordName)", with: "&r=\(owner.recordName)")
        #expect(try server.request("GET", forged, token: .some(nil)).json.serverErrorCode == "NOT_FOUND")
        let unsigned = String(url.split(separator: "?")[0])
        #expect(try server.request("GET", unsigned, token: .some(reader.token)).json.serverErrorCode == "NOT_FOUND")
        let tampered = url.dropLast(4) + "0000"
        #expect(try server.request("GET", String(tampered), token: .some(nil)).json.serverErrorCode == "NOT_FOUND")

        // Hidden again: URLs handed out before stop working too.
        #expect(try server.tandem("users/discoverability", ["discoverable": false], as: owner).status == 200)
        #expect(try server.request("GET", url, token: .some(nil)).status == 404)
        #expect(try lookups() == [nil, nil, nil])
    }

    /// R32 on the one-record path (P63): a lookup of the share record alone carried no
    /// `avatarURL` for its owner, while the same lookup with a second record, a query and the
    /// change feed did. Now every read of a share record signs the pictures its viewer may see.
    @Test func aShareRecordLookedUpAloneCarriesItsOwnersPicture() throws {
        let server = try Self.server.server
        let owner = try server.person("pictured")
        #expect(try upload(server, Self.png, type: "image/png", token: owner.token).status == 200)
        let note = try server.shareNote(owner: owner)
        func lookup(_ names: [String]) throws -> String {
            let response = try server.post("records/lookup", ["records": .array(names.map { ["recordName": .string($0)] }),
                                                              "zoneID": ["zoneName": .string(note.zone)]], as: owner, database: "private")
            #expect(response.status == 200, "\(response.text)")
            let share = response.json["records"]?.arrayValue?.first { $0["recordName"] == "share" }
            return JSONWriter.string(try #require(share))
        }
        let alone = try lookup(["share"]), withRoot = try lookup(["share", "note"])
        #expect(alone.contains("\"avatarURL\""), "\(alone)")
        #expect(withRoot.contains("\"avatarURL\""))
    }

    @Test func identicalPicturesShareAFileUntilTheLastOneGoes() throws {
        let server = try Self.server.server
        let bytes = Self.png + Data("shared \(UUID())".utf8)
        let first = try server.person("twin")
        let second = try server.person("twin")
        let firstURL = try #require(avatarURL(try upload(server, bytes, type: "image/png", token: first.token)))
        let secondURL = try #require(avatarURL(try upload(server, bytes, type: "image/png", token: second.token)))
        #expect(checksum(firstURL) == checksum(secondURL))
        #expect(try server.auth("account/avatar/remove", [:], bearer: first.token).status == 200)
        #expect(try server.request("GET", secondURL, token: .some(nil)).body == bytes, "the other account's picture stays")
        #expect(try server.request("GET", firstURL, token: .some(nil)).status == 404)
        #expect(try server.auth("account/avatar/remove", [:], bearer: second.token).status == 200)
        #expect(!files(server).contains(checksum(secondURL)))
    }

    @Test func deletingTheAccountErasesItsAvatar() throws {
        let server = try Self.server.server
        let app = try server.apiToken()
        let email = "\(unique("leaving"))@example.com".lowercased()
        try server.signUpVerified(email, password: "a long password", apiToken: app)
        let token = try server.signIn(email, password: "a long password", apiToken: app)
        let url = try #require(avatarURL(try upload(server, Self.png + Data(email.utf8), type: "image/png", token: token)))
        #expect(files(server).contains(checksum(url)))
        let deleted = try server.auth("account/delete", ["password": "a long password"], bearer: token)
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(try server.request("GET", url, token: .some(nil)).status == 404)
        #expect(!files(server).contains(checksum(url)))
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email IS NULL AND avatar_checksum IS NOT NULL") == "0")
    }
}
