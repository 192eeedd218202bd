import Foundation
import Testing
import TandemCore

/// No group session survives a restart (decisions G2), so neither do their journal files (D37).
@Suite struct JournalRestartTests {
    static func journalFiles(_ server: TestServer) -> [String] {
        let root = server.dataDirectory + "/journal"
        let names = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return names.filter { name in
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &directory) && !directory.boolValue
        }
    }

    @Test func journalFilesOfSessionsLiveAtACrashAreDeletedAtTheNextStart() async throws {
        let server = try TestServer()
        let ada = try server.person("ada"), bob = try server.person("bob")
        let created = try server.tandem("conversations/create", ["members": [.string(bob.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue)
        let probe = try await StreamProbe.connect(server, as: ada)
        _ = try await SessionProtocolTests.reply(probe, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await SessionProtocolTests.reply(probe, ["type": "activity.activate", "activity": SessionProtocolTests.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue)
        let joined = try await SessionProtocolTests.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
        let participant = try #require(joined["result"]?["participantID"]?.stringValue)
        let upload = try server.request("POST", "\(server.baseURL)/journal/1/\(TestServer.container)/development/\(sessionID)?participantID=\(participant)",
                                        body: Data("journal bytes".utf8), token: .some(ada.token))
        #expect(upload.status == 200, "\(upload.text)")
        #expect(Self.journalFiles(server).count == 1)
        // A member's download is the bytes, never sniffed or run as a page (C64's headers).
        let attachment = try #require(upload.json["attachment"]?["id"]?.stringValue, "\(upload.text)")
        let download = try server.request("GET", "\(server.baseURL)/journal/1/\(TestServer.container)/development/\(sessionID)/\(attachment)",
                                          token: .some(ada.token))
        #expect(download.status == 200 && download.text == "journal bytes")
        #expect(download.headers["x-content-type-options"] == "nosniff")
        #expect(download.headers["content-security-policy"]?.contains("sandbox") == true)

        server.kill()   // no clean shutdown: the session is gone with the process
        try server.start()
        #expect(Self.journalFiles(server).isEmpty, "left: \(Self.journalFiles(server))")
        server.stop()
    }
}
