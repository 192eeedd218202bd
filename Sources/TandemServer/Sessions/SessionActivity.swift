import Foundation
import TandemCore

/// A group activity as the server keeps it: the activity type identifier, the metadata shown in
/// invitations, and the app's own encoding of the activity (SharePlay: `GroupActivity`,
/// `GroupActivityMetadata`).
///
/// Wire shape: `{"identifier": "com.example.draw", "metadata": {"title": …, "subtitle": …,
/// "type": "createTogether", "fallbackURL": "https://…", "lifetimePolicy": "automatic",
/// "previewImage": {"checksum": …, "size": …}}, "payload": "<the app's encoding, ≤ 256 KiB>"}`.
struct SessionActivity: Sendable, Equatable {
    /// `ActivityType` raw values (SharePlay's list).
    static let types: Set<String> = ["generic", "watchTogether", "listenTogether", "createTogether", "workoutTogether",
                                     "shopTogether", "exploreTogether", "learnTogether", "readTogether", "playTogether"]
    static let lifetimePolicies: Set<String> = ["automatic", "endsWhenInitiatorLeaves"]

    var identifier: String
    var metadata: JSONObject
    var payload: String

    var endsWhenInitiatorLeaves: Bool { metadata["lifetimePolicy"]?.stringValue == "endsWhenInitiatorLeaves" }

    /// Reads and checks an activity.
    /// - Throws: `BAD_REQUEST` naming the field at fault (an identifier outside
    ///   `Names.isValidActivityIdentifier`, C66); `MESSAGE_TOO_LARGE` for a payload over 256 KiB.
    static func parse(_ value: JSONValue?) throws(CloudKitError) -> SessionActivity {
        guard let object = value?.objectValue else { throw .badRequest("'activity' must be an object {identifier, metadata, payload}") }
        guard let identifier = object["identifier"]?.stringValue, Names.isValidActivityIdentifier(identifier) else {
            throw .badRequest("activity.identifier must be \(Names.activityIdentifierRule)")
        }
        let payload = object["payload"]?.stringValue ?? ""
        guard payload.utf8.count <= Limits.sessionMessageBytes else {
            throw CloudKitError(.messageTooLarge, "activity.payload is \(payload.utf8.count) bytes; at most \(Limits.sessionMessageBytes)")
        }
        var metadata = JSONObject()
        let given = object["metadata"]?.objectValue ?? JSONObject()
        for key in ["title", "subtitle", "fallbackURL"] {
            guard let field = given[key], !field.isNull else { continue }
            guard let text = field.stringValue, text.utf8.count <= 4096 else {
                throw .badRequest("activity.metadata.\(key) must be a string of at most 4096 bytes")
            }
            if key == "fallbackURL" {
                guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                    throw .badRequest("activity.metadata.fallbackURL must be an http(s) URL")
                }
            }
            metadata[key] = .string(text)
        }
        let type = given["type"]?.stringValue ?? "generic"
        guard types.contains(type) else {
            throw .badRequest("activity.metadata.type must be one of \(types.sorted().joined(separator: ", ")), not '\(type)'")
        }
        metadata["type"] = .string(type)
        let policy = given["lifetimePolicy"]?.stringValue ?? "automatic"
        guard lifetimePolicies.contains(policy) else {
            throw .badRequest("activity.metadata.lifetimePolicy must be 'automatic' or 'endsWhenInitiatorLeaves'")
        }
        metadata["lifetimePolicy"] = .string(policy)
        if let image = given["previewImage"], !image.isNull {
            guard let checksum = image["checksum"]?.stringValue, let size = image["size"]?.int64Value else {
                throw .badRequest("activity.metadata.previewImage must be {checksum, size} from journal/upload")
            }
            metadata["previewImage"] = .object(["checksum": .string(checksum), "size": .int(size)])
        }
        return SessionActivity(identifier: identifier, metadata: metadata, payload: payload)
    }

    var json: JSONValue {
        .object(["identifier": .string(identifier), "metadata": .object(metadata), "payload": .string(payload)])
    }
}
