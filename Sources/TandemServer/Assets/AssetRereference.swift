import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// `POST .../{private|shared}/assets/rereference` (decisions J9): receipts for assets that
/// records already hold, so another record can be saved with the same bytes without uploading
/// them again. CloudKit JS sends it during `saveRecords` for every field value holding
/// `recordName` + `fieldName` (an asset taken from a fetched record), reads `assets[i]` back and
/// saves that dictionary as the field value in `records/modify`.
///
/// Request: `{"assets": [{recordName, fieldName, fileChecksum?}, ...], "zoneID": {...},
/// "targetZoneID"?: {...}}` (at most 200 entries). A zone is found by its owner: one with no
/// `ownerRecordName`, or the caller's, is in the caller's private database; another user's is
/// reached through the caller's shared database. `targetZoneID` defaults to `zoneID`.
///
/// Answer: `{"assets": [{recordName, fieldName, fileChecksum, size, receipt}, ...]}` in request
/// order; an entry the caller cannot have is `{recordName, fieldName, serverErrorCode, reason}`:
/// `NOT_FOUND` for an unknown record, one the caller may not read, or a zone they cannot see
/// (so existence does not leak); `BAD_REQUEST` when the field holds no asset, or no element of an
/// asset list with that `fileChecksum`. The whole request is refused (`ZONE_NOT_FOUND`,
/// `ACCESS_DENIED`) when the caller cannot write to the target zone.
///
/// A receipt is an upload receipt (`assets/upload`) already complete: it works in `records/modify`
/// of the target zone's owner for 15 minutes, like one from an upload.
enum AssetRereference {
    static let limit = 200

    static func route(_ services: Services) -> DatabaseRoute {
        DatabaseRoute(operation: "assets/rereference", method: "POST", databases: [.private, .shared],
                      summary: "Receipts for assets records already hold, to save them in other records",
                      requestSchema: "AssetsRereferenceRequest", responseSchema: "AssetsRereferenceResponse") { context in
            try respond(context, services)
        }
    }

    static func respond(_ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let body = try context.jsonBody()
        let items = try RequestContext.items(body, "assets", limit: limit,
                                             needed: "assets/rereference needs an 'assets' array of {recordName, fieldName, fileChecksum}")
        let source = try body["zoneID"].flatMap { $0.isNull ? nil : try RecordCodec.decodeZoneID($0) } ?? ZoneID.defaultZone
        let target = try body["targetZoneID"].flatMap { $0.isNull ? nil : try RecordCodec.decodeZoneID($0) } ?? source
        let scope = context.scope
        let user = scope.user
        let targetOwner = target.ownerRecordName ?? user
        if targetOwner != user {
            let writable = try services.store.read { reader -> Bool in
                guard let (access, _) = try RecordService.resolve(reader, Self.scope(scope, .shared), target) else { return false }
                return access.shares.values.contains { share in
                    AccessPolicy.decide(access.principal(for: share), .write, share: ZoneAccess.facts(share)).isAllowed
                }
            }
            guard writable else { throw CloudKitError(.accessDenied, "you cannot write to zone '\(target.zoneName)'") }
        }
        let sourceDatabase: DatabaseType = (source.ownerRecordName ?? user) == user ? .private : .shared
        let now = Clock.milliseconds()
        var answers: [JSONValue] = []
        var receipts: [AssetUpload] = []
        try services.store.read { reader in
            // The source zone once for all entries: hidden or missing makes each entry NOT_FOUND.
            let access = try? RecordService.resolve(reader, Self.scope(scope, sourceDatabase), source)?.0
            for (index, item) in items.enumerated() {
                let recordName = item["recordName"]?.stringValue ?? "", fieldName = item["fieldName"]?.stringValue ?? ""
                func refuse(_ code: ServerErrorCode, _ reason: String) {
                    answers.append(["recordName": .string(recordName), "fieldName": .string(fieldName),
                                    "serverErrorCode": .string(code.rawValue), "reason": .string(reason)])
                }
                guard !recordName.isEmpty, !fieldName.isEmpty else {
                    refuse(.badRequest, "assets[\(index)] needs 'recordName' and 'fieldName'")
                    continue
                }
                let wanted = item["fileChecksum"]?.stringValue
                guard let access, let found = try reader.recordWithMembership(zone: access.zone, name: recordName),
                      access.decide(.read, membership: found.membership).isAllowed else {
                    refuse(.notFound, "record '\(recordName)' not found")
                    continue
                }
                let assets = (found.record.fields[fieldName]?.elements ?? []).compactMap { value -> Asset? in
                    if case .asset(let asset) = value { asset } else { nil }
                }
                guard !assets.isEmpty else {
                    refuse(.badRequest, "field '\(fieldName)' of record '\(recordName)' holds no asset")
                    continue
                }
                guard let asset = wanted.map({ checksum in assets.first { $0.fileChecksum == checksum } }) ?? assets.first else {
                    refuse(.badRequest, "field '\(fieldName)' of record '\(recordName)' holds no asset with fileChecksum '\(wanted ?? "")'")
                    continue
                }
                let upload = AssetUpload(token: Tokens.random(prefix: "up_"), container: scope.database.container,
                                         environment: scope.database.environment, owner: targetOwner, recordType: found.record.recordType,
                                         fieldName: fieldName, recordName: nil, expiresAt: now + Limits.assetUploadSeconds * 1000,
                                         checksum: asset.fileChecksum, size: asset.size)
                receipts.append(upload)
                answers.append(["recordName": .string(recordName), "fieldName": .string(fieldName),
                                "fileChecksum": .string(asset.fileChecksum), "size": .int(asset.size), "receipt": .string(upload.token)])
            }
        }
        let made = receipts
        if !made.isEmpty {
            try services.store.write { tx in
                for upload in made {
                    try tx.addAssetUpload(upload)
                    _ = try tx.completeAssetUpload(token: upload.token, checksum: upload.checksum ?? "", size: upload.size ?? 0)
                }
            }
        }
        return Responses.json(.object(["assets": .array(answers)]))
    }

    /// The caller's scope in `database` (zones of others are reached through the shared one).
    static func scope(_ scope: RequestScope, _ database: DatabaseType) -> RequestScope {
        var copy = scope
        copy.database = DatabaseScope(container: scope.database.container, environment: scope.database.environment,
                                      database: database, owner: scope.user)
        return copy
    }
}
