public import Foundation
internal import TandemCore

/// What a share URL leads to, as the caller may see it (CloudKit's `CKShare.Metadata`).
///
/// From `Container.shareMetadata(for:)` (CloudKit Web Services: records/resolve). A stranger to a
/// private share gets `participantStatus` `.unknown`, no `share` and no root (decisions T7, T8).
public struct ShareMetadata: Sendable, Hashable {
    public var containerIdentifier: String
    /// The share URL's token.
    public var shortGUID: String
    /// The share, when the caller may see it.
    public var share: Share?
    /// The root record's ID (nil for zone-wide shares), in the caller's shared-database view.
    public var hierarchicalRootRecordID: Record.ID?
    /// The root record, when fetched and visible.
    public var rootRecord: Record?
    public var ownerIdentity: UserIdentity
    public var participantRole: Share.ParticipantRole
    public var participantStatus: Share.ParticipantAcceptanceStatus
    public var participantPermission: Share.ParticipantPermission
    /// True when the caller may request access (D7).
    public var allowsAccessRequests: Bool

    init(json: JSONValue) {
        containerIdentifier = json["containerIdentifier"]?.stringValue ?? ""
        shortGUID = json["shortGUID"]?.stringValue ?? ""
        share = json["share"].flatMap { try? Record(json: $0, scope: .shared) }.flatMap(Share.init)
        rootRecord = json["rootRecord"].flatMap { try? Record(json: $0, scope: .shared) }
        let zone = json["zoneID"].flatMap { try? RecordCodec.decodeZoneID($0) }
        if let zone, let root = json["rootRecordName"]?.stringValue {
            hierarchicalRootRecordID = Record.ID(recordName: root, zoneID: RecordZone.ID(wire: zone, scope: .shared))
        }
        ownerIdentity = UserIdentity(wire: ShareCodec.decodeIdentity(json["ownerIdentity"] ?? .null))
        participantRole = json["participantType"]?.stringValue.flatMap(Share.ParticipantRole.init) ?? .unknown
        participantStatus = json["participantStatus"]?.stringValue.flatMap(Share.ParticipantAcceptanceStatus.init) ?? .unknown
        participantPermission = json["participantPermission"]?.stringValue.flatMap(Share.ParticipantPermission.init) ?? .unknown
        allowsAccessRequests = json["allowsAccessRequests"]?.boolValue ?? false
    }
}

extension Container {
    /// Resolves a share URL (`CKContainer.shareMetadata(for:)`; CloudKit Web Services
    /// records/resolve, with the root record). Throws `unknownItem` for a share that does not
    /// exist, was deleted, or refuses the caller (the same answer, D7/T9), `notAuthenticated`.
    public func shareMetadata(for url: URL) async throws(TandemError) -> ShareMetadata {
        let item = try await shortGUIDRequest("records/resolve", url: url, fetchRoot: true)
        return ShareMetadata(json: item)
    }

    /// Accepts a share (`CKContainer.accept(_:)`; records/accept): its zone then appears in the
    /// caller's shared database. Returns the share as the caller now sees it. Throws
    /// `unknownItem` (no such share, or refused), `participantMayNeedVerification` when the
    /// caller is not among a private share's invitees (CloudKit's answer when an invitation was
    /// sent to another address), `tooManyParticipants`.
    @discardableResult
    public func accept(_ metadata: ShareMetadata) async throws(TandemError) -> Share {
        let item: JSONValue
        do {
            item = try await shortGUIDRequest("records/accept", guid: metadata.shortGUID, fetchRoot: false)
        } catch where (error.code == .unknownItem || error.code == .permissionFailure)
            && metadata.participantStatus == .unknown && metadata.share == nil && !metadata.allowsAccessRequests {
            var verification = error
            verification.code = .participantMayNeedVerification
            throw verification
        }
        guard let share = ShareMetadata(json: item).share ?? metadata.share else {
            throw TandemError(.internalError, "records/accept answered without the share")
        }
        return share
    }

    /// Asks the owners of shares to let the caller in (`CKContainer.requestShareAccess(for:)`;
    /// `/tandem/1/{container}/{environment}/shares/requestAccess`, decisions D7). Throws
    /// `partialFailure` keyed by `.shareURL` when some requests were refused (`unknownItem`: the
    /// share does not exist or does not take requests).
    public func requestShareAccess(for urls: [URL]) async throws(TandemError) {
        let body: JSONValue = .object(["shareURLs": .array(urls.map { .string($0.absoluteString) })])
        let json = try await transport.json(transport.tandemURL("shares/requestAccess"), body: body)
        let results = try [JSONValue].items(json, "results", in: "shares/requestAccess")
        var errors: [TandemError.ItemID: TandemError] = [:]
        for (url, result) in zip(urls, results) {
            if let error = ServerErrors.decode(result, scope: .shared) { errors[.shareURL(url.absoluteString)] = error }
        }
        guard errors.isEmpty else {
            throw TandemError(.partialFailure, "\(errors.count) of \(urls.count) access requests failed", partialErrorsByItemID: errors)
        }
    }

    private func shortGUIDRequest(_ operation: String, url: URL, fetchRoot: Bool) async throws(TandemError) -> JSONValue {
        guard let guid = url.pathComponents.last, url.pathComponents.dropLast().last == "share" else {
            throw TandemError(.invalidArguments, "\(url) is not a share URL ({server}/share/{shortGUID})")
        }
        return try await shortGUIDRequest(operation, guid: guid, fetchRoot: fetchRoot)
    }

    private func shortGUIDRequest(_ operation: String, guid: String, fetchRoot: Bool) async throws(TandemError) -> JSONValue {
        let body: JSONValue = .object(["shortGUIDs": .array([.object(["value": .string(guid), "shouldFetchRootRecord": .bool(fetchRoot)])])])
        let json = try await transport.json(transport.databaseURL(.public, operation), body: body)
        guard let item = try [JSONValue].items(json, "results", in: operation).first else {
            throw TandemError(.internalError, "\(operation) answered without a result")
        }
        if let error = ServerErrors.decode(item, scope: .shared) { throw error }
        return item
    }
}
