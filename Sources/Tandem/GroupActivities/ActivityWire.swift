import Foundation
internal import TandemCore

/// An activity on the wire: `{identifier, metadata, payload}` with the activity's JSON as payload.
enum ActivityWire {
    /// Encodes `activity`, uploading its preview image first when it has one.
    /// - Throws: `invalidArguments`, before anything is sent, for an `activityIdentifier` the
    ///   server would refuse (C66; same rule and wording as its `BAD_REQUEST`).
    static func prepare<A: GroupActivity>(_ activity: A, _ link: SessionLink) async throws(TandemError) -> JSONValue {
        guard Names.isValidActivityIdentifier(A.activityIdentifier) else {
            throw TandemError(.invalidArguments, "activityIdentifier must be \(Names.activityIdentifierRule), not '\(A.activityIdentifier)'")
        }
        guard let image = activity.metadata.previewImage else { return try encode(activity, previewImage: nil) }
        let answer = try await link.transport.send(link.transport.previewURL(checksum: nil), method: "POST", body: image,
                                                   contentType: "application/octet-stream")
        guard let json = try? JSONParser.parse([UInt8](answer)), let preview = json["previewImage"] else {
            throw TandemError(.serverResponseLost, "the preview upload answered without a previewImage")
        }
        return try encode(activity, previewImage: preview)
    }

    static func encode<A: GroupActivity>(_ activity: A, previewImage: JSONValue?) throws(TandemError) -> JSONValue {
        var metadata = activity.metadata
        metadata.previewImage = nil
        var object: JSONObject = ["type": .string(metadata.type.rawValue), "lifetimePolicy": .string(metadata.lifetimePolicy.rawValue)]
        if let title = metadata.title { object["title"] = .string(title) }
        if let subtitle = metadata.subtitle { object["subtitle"] = .string(subtitle) }
        if let url = metadata.fallbackURL { object["fallbackURL"] = .string(url.absoluteString) }
        if let previewImage { object["previewImage"] = previewImage }
        let payload: Data
        do { payload = try JSONEncoder().encode(activity) } catch {
            throw TandemError(.invalidArguments, "cannot encode the activity: \(error)")
        }
        return .object(["identifier": .string(A.activityIdentifier), "metadata": .object(object),
                        "payload": .string(String(decoding: payload, as: UTF8.self))])
    }

    static func decode<A: GroupActivity>(_ json: JSONValue, as type: A.Type) throws(TandemError) -> A {
        guard let payload = json["payload"]?.stringValue else { throw TandemError(.serverResponseLost, "an activity without a payload") }
        do { return try JSONDecoder().decode(A.self, from: Data(payload.utf8)) } catch {
            throw TandemError(.incompatibleVersion, "cannot decode the activity as \(A.self): \(error)")
        }
    }

    static func metadata(_ json: JSONValue) -> GroupActivityMetadata {
        let m = json["metadata"]
        return GroupActivityMetadata(title: m?["title"]?.stringValue, subtitle: m?["subtitle"]?.stringValue,
                                     type: m?["type"]?.stringValue.flatMap(ActivityType.init(rawValue:)) ?? .generic,
                                     fallbackURL: m?["fallbackURL"]?.stringValue.flatMap(URL.init(string:)),
                                     lifetimePolicy: m?["lifetimePolicy"]?.stringValue
                                        .flatMap(GroupActivityMetadata.LifetimePolicy.init(rawValue:)) ?? .automatic)
    }
}
