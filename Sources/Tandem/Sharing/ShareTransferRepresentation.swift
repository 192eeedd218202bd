/// An item offered for collaboration whose share is made only when someone sends it
/// (`CKShareTransferRepresentation`, `NSItemProvider.registerCKShare(container:allowedSharingOptions:preparationHandler:)`).
///
/// ```swift
/// let item = ShareTransferRepresentation.prepareShare(container: container, rootRecord: trip.recordID) { share in
///     var share = share
///     share.title = "Lisbon in May"
///     return share
/// }
/// // Nothing exists on the server yet. When the person taps Send in a conversation:
/// try await container.conversations.send("Plan with me", sharing: item, in: chat.id)   // Collaborate
/// ```
///
/// `share()` (which `Conversations.send(_:sharing:in:mode:)` calls) finds the share the root
/// already has — made by this item earlier, another device or the app itself — and returns it
/// without calling the preparation closure: the closure's job is to configure a *new* share,
/// and calling it again would overwrite choices the owner made since (title, participants,
/// permissions). Otherwise it makes a new `Share` of the root (or of the zone), sets
/// `allowedSharingOptions` on it, hands it to the closure to configure, and saves the root and
/// the returned share in one request (decisions R13, R14). A closure that throws saves nothing
/// and its error comes out of `share()`; the next call tries again. Concurrent calls share one
/// attempt. If another device shared the root between the look and the save, its share is
/// returned.
///
/// Errors: the closure's own; `TandemError` `.unknownItem` for a root that does not exist,
/// `.invalidArguments` when the closure returns a share of another record or a save outside
/// the allowed sharing options, and any error of `Database.modifyRecords` (e.g.
/// `.alreadyShared` when the root is inside another share).
public actor ShareTransferRepresentation {
    /// What is shared: one record with everything below it, a whole zone, or a share that exists.
    enum Target: Sendable {
        case record(Record.ID)
        case zone(RecordZone.ID)
        case share(Record.ID)
    }

    private let container: Container
    private let target: Target
    /// The options set on a new share before the preparation closure sees it (R16).
    public nonisolated let allowedSharingOptions: AllowedSharingOptions
    private let preparation: (@Sendable (Share) async throws -> Share)?
    private var prepared: Share?
    private var attempt: Task<Share, any Error>?

    private init(container: Container, target: Target, allowedSharingOptions: AllowedSharingOptions,
                 preparation: (@Sendable (Share) async throws -> Share)?, prepared: Share? = nil) {
        self.container = container
        self.target = target
        self.allowedSharingOptions = allowedSharingOptions
        self.preparation = preparation
        self.prepared = prepared
    }

    /// A share of `rootRecord` (in the caller's private database) and everything below it,
    /// made when the item is sent (`CKShareTransferRepresentation.prepareShare`). `preparation`
    /// gets a new, unsaved share and returns it configured; it is not called when the root
    /// already has a share.
    public static func prepareShare(container: Container, allowedSharingOptions: AllowedSharingOptions = .standard,
                                    rootRecord: Record.ID,
                                    preparation: @escaping @Sendable (Share) async throws -> Share) -> ShareTransferRepresentation {
        ShareTransferRepresentation(container: container, target: .record(rootRecord), allowedSharingOptions: allowedSharingOptions,
                                    preparation: preparation)
    }

    /// A zone-wide share of `zoneID` (`CKShare(recordZoneID:)`), made when the item is sent.
    public static func prepareShare(container: Container, allowedSharingOptions: AllowedSharingOptions = .standard,
                                    zoneID: RecordZone.ID,
                                    preparation: @escaping @Sendable (Share) async throws -> Share) -> ShareTransferRepresentation {
        ShareTransferRepresentation(container: container, target: .zone(zoneID), allowedSharingOptions: allowedSharingOptions,
                                    preparation: preparation)
    }

    /// A share that exists already (`CKShareTransferRepresentation.existing`).
    public static func existing(_ share: Share, container: Container,
                                allowedSharingOptions: AllowedSharingOptions = .standard) -> ShareTransferRepresentation {
        ShareTransferRepresentation(container: container, target: .share(share.recordID), allowedSharingOptions: allowedSharingOptions,
                                    preparation: nil, prepared: share)
    }

    /// The item's share: the one that exists, else a new one prepared and saved now (see the
    /// type's comment for the rules and errors).
    public func share() async throws -> Share {
        if let prepared { return prepared }
        if let attempt { return try await attempt.value }
        let task = Task { try await self.findOrCreate() }
        attempt = task
        do {
            let share = try await task.value
            prepared = share
            attempt = nil
            return share
        } catch {
            attempt = nil
            throw error
        }
    }

    private func findOrCreate() async throws -> Share {
        let database = container.privateDatabase
        if let found = try await existingShare(database) { return found }
        guard let preparation else { throw TandemError(.unknownItem, "the share of this item no longer exists") }
        // The root as the server holds it now: saved with the new share, in one request.
        var saving: [Record] = []
        let blank: Share
        switch target {
        case .record(let id):
            let root = try await database.record(for: id)
            saving.append(root)
            blank = Share(rootRecord: root)
        case .zone(let zoneID):
            blank = Share(recordZoneID: zoneID)
        case .share:
            throw TandemError(.unknownItem, "the share of this item no longer exists")
        }
        var share = blank
        share.allowedSharingOptions = allowedSharingOptions
        share = try await preparation(share)
        guard share.recordID == blank.recordID, share.rootRecordID == blank.rootRecordID else {
            throw TandemError(.invalidArguments, "the preparation closure must return the share it was given, configured")
        }
        let result = try await database.modifyRecords(saving: saving + [share.record], deleting: [])
        do {
            return try result.savedShare(share)
        } catch {
            // Another device shared it between our look and our save: theirs is the share.
            if let found = try await existingShare(database) { return found }
            // The root's own error says more than the share's batchRequestFailed.
            if let root = saving.first, case .failure(let rootError)? = result.saveResults[root.recordID] { throw rootError }
            throw error
        }
    }

    /// The share the root (or the zone) has now, fetched fresh; nil when it has none.
    private func existingShare(_ database: Database) async throws -> Share? {
        let shareID: Record.ID
        switch target {
        case .record(let id):
            let root = try await database.record(for: id)
            guard let reference = root.share else { return nil }
            shareID = reference.recordID
        case .zone(let zoneID):
            shareID = Record.ID(recordName: Share.zoneWideShareRecordName, zoneID: zoneID)
        case .share(let id):
            shareID = id
        }
        do {
            return Share(try await database.record(for: shareID))
        } catch where error.code == .unknownItem {
            return nil
        }
    }
}
