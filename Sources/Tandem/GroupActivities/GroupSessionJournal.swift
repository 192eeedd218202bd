public import Foundation
internal import TandemCore
import Synchronization

/// Files shared with a session (SharePlay: `GroupSessionJournal`): uploaded once, listed for
/// everyone, delivered to late joiners, removable by anyone, deleted by the server when the last
/// participant leaves (D37). At most 100 MiB per attachment.
///
/// ```swift
/// let journal = GroupSessionJournal(session: session)
/// let attachment = try await journal.add(pngData, metadata: ["name": "cat.png"])
/// for await list in journal.attachments { for item in list { let bytes = try await item.load() } }
/// ```
public final class GroupSessionJournal: Sendable {
    let core: SessionCore

    public init<Activity>(session: GroupSession<Activity>) { core = session.core }

    /// SharePlay: `GroupSessionJournal.Attachment`.
    public struct Attachment: Sendable, Hashable, Identifiable {
        public let id: UUID
        /// Bytes.
        public let size: Int
        /// The metadata as the uploader encoded it (JSON), empty when none.
        public let metadata: Data
        let sessionID: UUID
        let link: SessionLink

        init?(json: JSONValue, sessionID: UUID, link: SessionLink) {
            guard let id = json["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else { return nil }
            self.id = id
            size = Int(json["size"]?.int64Value ?? 0)
            metadata = json["metadata"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Data()
            self.sessionID = sessionID
            self.link = link
        }

        /// Downloads the bytes. Throws `unknownItem` once removed or when not joined.
        public func load() async throws(TandemError) -> Data {
            try await link.transport.send(link.transport.journalURL(sessionID: sessionID, attachmentID: id), method: "GET", body: nil,
                                          contentType: "")
        }

        /// The metadata decoded as `T`.
        public func loadMetadata<T: Decodable>(of type: T.Type) throws(TandemError) -> T {
            do { return try JSONDecoder().decode(T.self, from: metadata) } catch {
                throw TandemError(.invalidArguments, "the metadata does not decode as \(T.self): \(error)")
            }
        }

        public static func == (lhs: Attachment, rhs: Attachment) -> Bool { lhs.id == rhs.id }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }

    /// Uploads `data` for everyone. The caller must have joined.
    /// - Throws: `limitExceeded` over 100 MiB, `unknownItem` when not joined.
    @discardableResult
    public func add(_ data: Data, metadata: Data = Data()) async throws(TandemError) -> Attachment {
        guard let participant = core.state.withLock({ $0.local }) else { throw TandemError(.invalidArguments, "join the session first") }
        // Refused here, before 100 MiB travel only to be refused: the server answers 413 on the
        // declared length and closes, and a client still sending then sees a broken pipe.
        guard data.count <= Limits.journalAttachmentBytes else {
            throw TandemError(.limitExceeded, "a journal attachment has at most \(Limits.journalAttachmentBytes) bytes (100 MiB); this one has \(data.count)")
        }
        let url = core.link.transport.journalURL(sessionID: core.id, attachmentID: nil,
                                                 query: [URLQueryItem(name: "participantID", value: participant.uuidString),
                                                         URLQueryItem(name: "metadata", value: metadata.base64EncodedString())])
        let answer = try await core.link.transport.send(url, method: "POST", body: data, contentType: "application/octet-stream")
        guard let json = try? JSONParser.parse([UInt8](answer)), let attachment = json["attachment"],
              let result = Attachment(json: attachment, sessionID: core.id, link: core.link) else {
            throw TandemError(.serverResponseLost, "the journal answered without an attachment")
        }
        return result
    }

    /// Uploads `data` with `metadata` JSON-encoded.
    @discardableResult
    public func add<Metadata: Encodable>(_ data: Data, metadata: Metadata) async throws(TandemError) -> Attachment {
        let encoded: Data
        do { encoded = try JSONEncoder().encode(metadata) } catch { throw TandemError(.invalidArguments, "cannot encode: \(error)") }
        return try await add(data, metadata: encoded)
    }

    /// Removes an attachment for everyone.
    public func remove(attachment: Attachment) async throws(TandemError) {
        _ = try await core.link.request("journal.remove", ["sessionID": .string(core.id.uuidString),
                                                           "attachmentID": .string(attachment.id.uuidString)])
    }

    /// The current attachments.
    public var current: [Attachment] {
        core.state.withLock { $0.attachments }.compactMap { Attachment(json: $0, sessionID: core.id, link: core.link) }
    }

    /// The whole list, first as it is now, then whenever anyone adds or removes one.
    public var attachments: AsyncStream<[Attachment]> {
        let source = core.attachmentChanges.stream(initial: core.state.withLock { $0.attachments })
        let (id, link) = (core.id, core.link)
        return AsyncStream { continuation in
            let task = Task {
                for await list in source { continuation.yield(list.compactMap { Attachment(json: $0, sessionID: id, link: link) }) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
