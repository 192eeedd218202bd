import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Journal attachment bytes over HTTP (SharePlay: `GroupSessionJournal`; decisions D37, G7):
///
/// - `POST /journal/1/{container}/{environment}/{sessionID}?participantID=…&metadata=…` with the
///   raw bytes (at most 100 MiB) → `{"attachment": {id, size, checksum, metadata, createdAt}}`;
///   the caller must be joined as `participantID`. `metadata` is the app's encoding.
/// - `GET /journal/1/{container}/{environment}/{sessionID}/{attachmentID}` → the bytes, for a
///   user with a participant in the session.
/// - `POST /journal/1/{container}/{environment}/preview` with an activity's preview image (at
///   most 1 MiB) → `{"previewImage": {checksum, size}}`, stored as a content-addressed asset;
///   `GET …/preview/{checksum}` serves it to members of a conversation whose live session shows
///   it (decisions G11).
enum JournalRoutes {
    static let previewBytes = 1 << 20

    static let prefix = "/journal/1/"

    static func respond(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let head = context.request.head
        let parts = head.path.dropFirst(prefix.count).split(separator: "/").map(String.init)
        guard parts.count == 3 || parts.count == 4, let environment = Environment(rawValue: parts[1]) else {
            throw CloudKitError(.notFound, "expected /journal/1/{container}/{environment}/{sessionID}[/{attachmentID}]")
        }
        let user = try services.authenticator.user(headers: head.headers["authorization"], parameters: context.parameters,
                                                   container: parts[0], signInURL: "")
        if parts[2] == "preview" { return try preview(context, parts, user: user.recordName, environment: environment, services) }
        guard let sessionID = UUID(uuidString: parts[2]) else { throw CloudKitError(.notFound, "no session '\(parts[2])'") }
        if parts.count == 4 {
            guard head.method == "GET" else { throw MethodNotAllowed(allowed: "GET") }
            guard let attachment = UUID(uuidString: parts[3]) else { throw CloudKitError(.notFound, "no attachment '\(parts[3])'") }
            let path = try services.sessions.attachmentFile(user: user.recordName, container: parts[0], environment: environment,
                                                            sessionID: sessionID, attachmentID: attachment)
            guard let response = try FileDownload.response(path: path, headers: [("content-type", "application/octet-stream")] + WebPages.untrustedBytesHeaders,
                                                        rangeHeader: nil, uuid: context.uuid) else {
                throw CloudKitError(.notFound, "no attachment '\(attachment.uuidString)' in a session you joined")
            }
            return response
        }
        guard head.method == "POST" else { throw MethodNotAllowed(allowed: "POST") }
        guard let text = context.parameters["participantID"], let participant = UUID(uuidString: text) else {
            throw CloudKitError.badRequest("journal uploads need ?participantID= (your participant in the session)")
        }
        let attachment = try services.sessions.addAttachment(user: user.recordName, container: parts[0], environment: environment,
                                                             sessionID: sessionID, participantID: participant,
                                                             body: context.request, metadata: context.parameters["metadata"] ?? "")
        return Responses.json(["attachment": attachment])
    }

    private static func preview(_ context: RequestContext, _ parts: [String], user: String, environment: Environment,
                                _ services: Services) throws -> HTTPResponse {
        if parts.count == 4 {
            guard context.request.head.method == "GET" else { throw MethodNotAllowed(allowed: "GET") }
            guard services.sessions.showsPreview(parts[3], to: user, container: parts[0], environment: environment),
                  let path = services.store.assets.path(forChecksum: parts[3]),
                  let response = try FileDownload.response(path: path, headers: [("content-type", "application/octet-stream")] + WebPages.untrustedBytesHeaders,
                                                       rangeHeader: nil, uuid: context.uuid) else {
                throw CloudKitError(.notFound, "no preview image '\(parts[3])' in a session of yours")
            }
            return response
        }
        guard context.request.head.method == "POST" else { throw MethodNotAllowed(allowed: "POST") }
        let bytes = context.request.body
        guard !bytes.isEmpty, bytes.count <= previewBytes else {
            throw CloudKitError(.limitExceeded, "a preview image has 1 byte to \(previewBytes) bytes (1 MiB); got \(bytes.count)")
        }
        let checksum = try services.store.assets.store(bytes)
        return Responses.json(["previewImage": ["checksum": .string(checksum), "size": .int(Int64(bytes.count))]])
    }
}
