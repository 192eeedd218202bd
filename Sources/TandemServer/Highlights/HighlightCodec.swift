import Foundation
import TandemCore
import TandemStore

/// Wire shape of a highlight.
enum HighlightCodec {
    /// `{"identifier", "url", "date", "pinned", "suggested", "attributions": [{"sender",
    /// "conversationID", "isGroup", "eventID", "date", "pinned", "title"?}], "collaboration"?}`.
    static func highlight(_ highlight: Highlight) -> JSONValue {
        var object: JSONObject = ["identifier": .string(highlight.identifier), "url": .string(highlight.url), "date": .int(highlight.date),
                                  "pinned": .bool(highlight.pinned), "suggested": .bool(highlight.suggested)]
        object["attributions"] = .array(highlight.attributions.map { attribution in
            var entry: JSONObject = ["sender": .string(attribution.sender), "conversationID": .string(attribution.conversationID),
                                     "isGroup": .bool(attribution.isGroup), "eventID": .string(attribution.eventID),
                                     "date": .int(attribution.date), "pinned": .bool(attribution.pinned)]
            if let title = attribution.title { entry["title"] = .string(title) }
            return .object(entry)
        })
        if let collaboration = highlight.collaboration { object["collaboration"] = CollaborationCodec.collaboration(collaboration) }
        return .object(object)
    }

    /// The same array as `.array(list.map(highlight))`, written straight into bytes (the list can
    /// hold thousands of attributions; building a JSON tree first doubled its cost).
    static func bytes(_ list: [Highlight]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + list.count * 320)
        func key(_ name: StaticString, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: "\":".utf8)
        }
        func string(_ text: String) { JSONWriter.write(.string(text), into: &out) }
        func int(_ value: Int64) { out.append(contentsOf: String(value).utf8) }
        func bool(_ value: Bool) { out.append(contentsOf: (value ? "true" : "false").utf8) }
        out.append(UInt8(ascii: "["))
        for (index, highlight) in list.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            key("identifier", first: true); string(highlight.identifier)
            key("url"); string(highlight.url)
            key("date"); int(highlight.date)
            key("pinned"); bool(highlight.pinned)
            key("suggested"); bool(highlight.suggested)
            key("attributions")
            out.append(UInt8(ascii: "["))
            for (position, attribution) in highlight.attributions.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "{"))
                key("sender", first: true); string(attribution.sender)
                key("conversationID"); string(attribution.conversationID)
                key("isGroup"); bool(attribution.isGroup)
                key("eventID"); string(attribution.eventID)
                key("date"); int(attribution.date)
                key("pinned"); bool(attribution.pinned)
                if let title = attribution.title { key("title"); string(title) }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
            if let collaboration = highlight.collaboration {
                key("collaboration")
                JSONWriter.write(CollaborationCodec.collaboration(collaboration), into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
