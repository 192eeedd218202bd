import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// A session's `deliver` and `request` without Codable (decisions N60): the text they make is
/// read by `JSONDecoder` as the same event, `JSONEncoder`'s text is read by them as the same
/// event, and anything else is left to Codable.
struct BusFastCodecTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var event: BusEvent
        var testDescription: String { label }
    }

    static func session(_ kind: SessionTraffic.Kind, sentAt: Double? = 1_764_000_000.123456) -> BusEvent {
        BusEvent(origin: "node-a", body: .session(SessionTraffic(container: "iCloud.com.example.app", environment: "development", kind: kind)),
                 sentAt: sentAt)
    }

    static let frame = Data([0, 1, 2, 0xFF, 0x7F, 0x80] + Array(repeating: 0x41, count: 61))

    static let cases: [Case] = [
        Case(label: "deliver, bytes, two nodes", event: session(.deliver(receivers: ["node-b": [3, 9, 12], "node-c": [1]], text: nil,
                                                                          binary: frame, droppable: false))),
        Case(label: "deliver, text with quotes, NUL escape and emoji", event: session(.deliver(
            receivers: ["node-b": [7]], text: #"{"type":"session.state","v":"a\"b 🎉 \u0000"}"#, binary: nil, droppable: true))),
        Case(label: "deliver, text and bytes, an empty list", event: session(.deliver(receivers: ["node-b": []], text: "t", binary: Data(),
                                                                                   droppable: false))),
        Case(label: "deliver, no receivers, no time", event: session(.deliver(receivers: [:], text: nil, binary: nil, droppable: true), sentAt: nil)),
        Case(label: "request with a frame", event: session(.request(owner: "node-a", connection: 42, user: "_ada", declared: ["c1", "c2"],
                                                                    envelope: nil, frame: frame))),
        Case(label: "request with an envelope, nothing declared", event: session(.request(
            owner: "node-b", connection: Int64.max.magnitude, user: "_bob", declared: [], envelope: #"{"type":"activity.activate"}"#, frame: nil))),
    ]

    /// Codable's text with sorted keys: two events are the same when these are equal.
    static func canonical(_ event: BusEvent) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(event)
    }

    @Test(arguments: cases) func itsTextIsReadByCodableAsTheSameEvent(_ item: Case) throws {
        let fast = try #require(BusFastCodec.encode(item.event))
        let decoded = try JSONDecoder().decode(BusEvent.self, from: Data(fast))
        #expect(try Self.canonical(decoded) == Self.canonical(item.event))
    }

    @Test(arguments: cases) func itReadsCodablesTextAsTheSameEvent(_ item: Case) throws {
        let codable = [UInt8](try JSONEncoder().encode(item.event))
        let decoded = try #require(BusFastCodec.decode(codable[...]), "\(String(decoding: codable, as: UTF8.self))")
        #expect(decoded.count == 1)
        #expect(try Self.canonical(decoded[0]) == Self.canonical(item.event))
        // And its own text, as a batch of every case, the way BusBatches joins them.
        let batch = BusBatches.group(Self.cases.map { ("s", BusFastCodec.encode($0.event)!) }, limit: 1 << 20)
        #expect(batch.count == 1)
        let all = try BusBatches.decode(batch[0].json[...])
        #expect(try all.map(Self.canonical) == Self.cases.map { try Self.canonical($0.event) })
    }

    @Test func otherEventsAndUnknownShapesAreLeftToCodable() throws {
        let heartbeat = Self.session(.heartbeat)
        #expect(BusFastCodec.encode(heartbeat) == nil)
        #expect(BusFastCodec.encode(BusEvent(origin: "node-a", body: .grantsRevoked)) == nil)
        #expect(BusFastCodec.encode(Self.session(.deliver(receivers: ["node-b": [UInt64.max]], text: "t", binary: nil, droppable: false))) == nil,
                "a connection number JSONValue cannot hold")
        // A batch holding one event of another kind is read by Codable, whole and in order.
        let mixed = BusBatches.group([("s", BusFastCodec.encode(Self.cases[0].event)!), ("s", [UInt8](try JSONEncoder().encode(heartbeat)))],
                                     limit: 1 << 20)
        #expect(BusFastCodec.decode(mixed[0].json[...]) == nil)
        let read = try BusBatches.decode(mixed[0].json[...])
        #expect(try read.map(Self.canonical) == [Self.canonical(Self.cases[0].event), Self.canonical(heartbeat)])
        // A real NUL in a text: read back the same, by whichever reader takes it.
        let nul = Self.session(.deliver(receivers: ["node-b": [1]], text: "a\u{0}b", binary: nil, droppable: false))
        let back = try BusBatches.decode(try #require(BusFastCodec.encode(nul))[...])
        #expect(try back.map(Self.canonical) == [Self.canonical(nul)])
        // Bytes that are not base64, a kind with two names, or a negative connection: not ours.
        for text in [#"{"origin":"a","body":{"session":{"_0":{"container":"c","environment":"e","kind":{"deliver":{"receivers":{},"binary":"%%","droppable":true}}}}}}"#,
                     #"{"origin":"a","body":{"session":{"_0":{"container":"c","environment":"e","kind":{"deliver":{"receivers":{},"droppable":true},"heartbeat":{}}}}}}"#,
                     #"{"origin":"a","body":{"session":{"_0":{"container":"c","environment":"e","kind":{"request":{"owner":"a","connection":-1,"user":"u","declared":[]}}}}}}"#] {
            #expect(BusFastCodec.decode(Array(text.utf8)[...]) == nil, "\(text)")
        }
    }
}
