import Foundation
import Testing
import TandemCore
import TandemTestSupport

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

    /// A live session with one journal attachment on `server`, uploaded by a new member;
    /// returns the attachment's download URL, the token that may fetch it, and the member's
    /// stream (the session lives while it is open).
    static func attachment(on server: TestServer) async throws -> (url: String, token: String, probe: StreamProbe) {
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
        let attachment = try #require(upload.json["attachment"]?["id"]?.stringValue, "\(upload.text)")
        return ("\(server.baseURL)/journal/1/\(TestServer.container)/development/\(sessionID)/\(attachment)", ada.token, probe)
    }

    @Test func journalFilesOfSessionsLiveAtACrashAreDeletedAtTheNextStart() async throws {
        let server = try TestServer()
        let attachment = try await Self.attachment(on: server)
        // A member's download is the bytes, never sniffed or run as a page (C64's headers).
        let download = try server.request("GET", attachment.url, token: .some(attachment.token))
        #expect(download.status == 200 && download.text == "journal bytes")
        #expect(download.headers["x-content-type-options"] == "nosniff")
        #expect(download.headers["content-security-policy"]?.contains("sandbox") == true)

        server.kill()   // no clean shutdown: the session is gone with the process
        try server.start()
        #expect(Self.journalFiles(server).isEmpty, "left: \(Self.journalFiles(server))")
        withExtendedLifetime(attachment.probe) {}
        server.stop()
    }

    /// Review 58: a second server alone on a data directory in use started, and deleted the
    /// first one's live journal files at its start. Servers share a directory only as nodes
    /// of one cluster (`--bus`); a second one alone is refused before it touches anything.
    @Test func aSecondServerAloneOnTheDirectoryIsRefusedAndDeletesNothing() async throws {
        let server = try TestServer()
        let attachment = try await Self.attachment(on: server)
        var refusal = ""
        #expect(throws: (any Error).self, "a second server alone on the directory does not start") {
            do {
                let second = try TandemProcess.serve(dataDirectory: server.dataDirectory)
                second.process.terminate()
                second.process.waitForTermination()
            } catch {
                refusal = "\(error)"
                throw error
            }
        }
        #expect(refusal.contains("another tandem server, or tandem migrate, is using") && refusal.contains("--bus"), "\(refusal)")
        #expect(Self.journalFiles(server).count == 1)
        let download = try server.request("GET", attachment.url, token: .some(attachment.token))
        #expect(download.status == 200 && download.text == "journal bytes")
        withExtendedLifetime(attachment.probe) {}
        server.stop()
    }
}
