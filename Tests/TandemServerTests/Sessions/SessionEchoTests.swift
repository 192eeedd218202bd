import Foundation
import Testing
import Synchronization
import TandemCore
import TandemHTTP

extension SessionProtocolTests {
    /// A client → server messenger frame (decisions G5) to everyone in the session.
    static func frame(session: String, clientSequence: UInt32, reliable: Bool, type: String, payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x01, reliable ? 0x03 : 0x00]
        withUnsafeBytes(of: UUID(uuidString: session)!.uuid) { frame.append(contentsOf: $0) }
        frame += withUnsafeBytes(of: clientSequence.bigEndian, Array.init)
        frame += withUnsafeBytes(of: UInt16(type.utf8.count).bigEndian, Array.init)
        frame += Array(type.utf8)
        frame += [0, 0]   // no recipients: everyone else
        return frame + payload
    }

    @Test("a sender never receives its own message, reliable or not; the others do, once", arguments: [true, false])
    func aSenderNeverHearsItself(reliable: Bool) async throws {
        let ada = try Self.server.person("ada"), bob = try Self.server.person("bob")
        let created = try Self.server.tandem("conversations/create", ["members": [.string(bob.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue)
        let adaProbe = try await StreamProbe.connect(Self.server, as: ada)
        let bobProbe = try await StreamProbe.connect(Self.server, as: bob)
        _ = try await Self.reply(adaProbe, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await Self.reply(adaProbe, ["type": "activity.activate", "activity": Self.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue)
        for probe in [adaProbe, bobProbe] {
            let joined = try await Self.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
            #expect(joined["result"]?["participantID"]?.stringValue != nil)
        }
        let payload = Array("hello from ada".utf8)
        await adaProbe.client.send(binary: Self.frame(session: sessionID, clientSequence: 1, reliable: reliable, type: "chat", payload: payload))
        #expect(await bobProbe.wait { $0.frames.withLock { $0.contains { $0.suffix(payload.count) == payload[...] } } })
        if reliable {
            // The acknowledgement comes after the frame was queued to every receiver.
            #expect(await adaProbe.wait { $0.has("session.sent") })
        }
        // A second message from Bob: once Ada has it, anything of her own would have arrived before it.
        let reply = Array("hello from bob".utf8)
        await bobProbe.client.send(binary: Self.frame(session: sessionID, clientSequence: 1, reliable: true, type: "chat", payload: reply))
        #expect(await adaProbe.wait { $0.frames.withLock { $0.contains { $0.suffix(reply.count) == reply[...] } } })
        #expect(adaProbe.frames.withLock { $0.filter { $0.suffix(payload.count) == payload[...] }.count } == 0, "Ada heard herself")
        #expect(bobProbe.frames.withLock { $0.filter { $0.suffix(reply.count) == reply[...] }.count } == 0, "Bob heard himself")
        #expect(bobProbe.frames.withLock { $0.filter { $0.suffix(payload.count) == payload[...] }.count } == 1)
    }
}
