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
}
