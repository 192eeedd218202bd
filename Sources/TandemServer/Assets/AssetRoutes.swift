import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Assets in three steps (CloudKit Web Services: assets/upload): `assets/upload` returns one
/// upload URL per field; a POST of the raw bytes to it answers `{"singleFile": {fileChecksum,
/// size, receipt}}`; a record saved with that dictionary gets a `downloadURL`, which serves the
/// bytes to a caller who may read the record. Upload URLs live 15 minutes; assets up to 50 MiB
/// (decisions D11).
struct AssetRoutes: Sendable {
    static let uploadPrefix = "/upload/1/"
    static let downloadPrefix = "/assets/1/"
    let store: any Store
    /// Signs `downloadURL`s so they work without credentials; nil: URLs need credentials.
    var signer: AssetURLSigner?

    static func uploadRoute(_ services: Services) -> DatabaseRoute {
        DatabaseRoute(operation: "assets/upload", method: "POST", databases: [.private, .shared],
                      summary: "Request upload URLs for asset fields", requestSchema: "AssetsUploadRequest",
                      responseSchema: "AssetsUploadResponse") { context in
            let body = try context.jsonBody()
            let items = try RequestContext.items(body, "tokens", limit: Limits.assetTokensPerRequest,
                                                 needed: "assets/upload needs a 'tokens' array of {recordType, fieldName, recordName?}")
            let scope = context.scope
            // Uploads belong to the zone's owner; in the shared database the caller needs write access there.
            var owner = scope.database.owner
            if scope.database.database == .shared {
                guard let zoneJSON = body["zoneID"], !zoneJSON.isNull else {
                    throw CloudKitError.badRequest("in the shared database assets/upload needs the zoneID (zoneName and ownerRecordName)")
                }
                let zoneID = try RecordCodec.decodeZoneID(zoneJSON)
                let writable = try services.store.read { reader -> Bool in
                    guard let (access, _) = try RecordService.resolve(reader, scope, zoneID) else { return false }
                    return access.shares.values.contains { share in
                        AccessPolicy.decide(access.principal(for: share), .write, share: ZoneAccess.facts(share)).isAllowed
                    }
                }
                guard writable else { throw CloudKitError(.accessDenied, "you cannot write to zone '\(zoneID.zoneName)'") }
                owner = zoneID.ownerRecordName ?? owner
            }
            var uploads: [AssetUpload] = []
            let expires = Clock.milliseconds() + Limits.assetUploadSeconds * 1000
            for (index, item) in items.enumerated() {
                guard let type = item["recordType"]?.stringValue, Names.isValidRecordType(type) else {
                    throw CloudKitError.badRequest("tokens[\(index)] needs a valid 'recordType'")
                }
                guard let field = item["fieldName"]?.stringValue, Names.isValidFieldName(field) else {
                    throw CloudKitError.badRequest("tokens[\(index)] needs a valid 'fieldName'")
                }
                let name = item["recordName"]?.stringValue
                uploads.append(AssetUpload(token: Tokens.random(prefix: "up_"),
                                           container: scope.database.container, environment: scope.database.environment,
                                           owner: owner, recordType: type, fieldName: field, recordName: name,
                                           expiresAt: expires))
            }
            let stored = uploads
            try services.store.write { tx in for upload in stored { try tx.addAssetUpload(upload) } }
            let tokens: [JSONValue] = uploads.map { upload in
                var o: JSONObject = ["fieldName": .string(upload.fieldName),
                                     "url": .string(context.baseURL + uploadPrefix + upload.token)]
                if let name = upload.recordName { o["recordName"] = .string(name) }
                o["recordType"] = .string(upload.recordType)
                return .object(o)
            }
            return Responses.json(.object(["tokens": .array(tokens)]))
        }
    }

    /// POST /upload/1/{token}: stores the body and answers the receipt dictionary.
    func receiveUpload(_ context: RequestContext) throws -> HTTPResponse {
        let token = String(context.request.head.path.dropFirst(Self.uploadPrefix.count))
        guard let upload = try store.read({ try $0.assetUpload(token: token) }), upload.checksum == nil else {
            throw CloudKitError(.notFound, "no open upload at this URL (unknown, already used, or expired)")
        }
        guard upload.expiresAt > Clock.milliseconds() else {
            throw CloudKitError(.notFound, "this upload URL expired; request a new one with assets/upload")
        }
        // The body was spooled to a file (BodyAdmission) and is stored by moving that file.
        let (checksum, stored) = try Self.storeBody(context.request, in: store.assets, limit: Limits.assetBytes,
                                                    tooLarge: "an asset may be at most \(Limits.assetBytes) bytes (50 MiB)")
        let size = Int64(stored)
        // Two uploads racing to one URL: the first to commit wins, the other gets NOT_FOUND.
        guard try store.write({ tx in try tx.completeAssetUpload(token: token, checksum: checksum, size: size) }) else {
            throw CloudKitError(.notFound, "no open upload at this URL (unknown, already used, or expired)")
        }
        let receipt: JSONObject = ["fileChecksum": .string(checksum), "size": .int(size), "receipt": .string(token)]
        return Responses.json(.object(["singleFile": .object(receipt)]))
    }

    /// Stores a request's body (its spooled file, or its bytes) in `files`, refusing more than
    /// `limit` bytes with `LIMIT_EXCEEDED`; returns the checksum and size.
    static func storeBody(_ request: HTTPRequest, in files: AssetFiles, limit: Int, tooLarge: String) throws -> (String, Int) {
        guard let file = request.bodyFile else {
            guard request.body.count <= limit else { throw CloudKitError(.limitExceeded, tooLarge) }
            return (try files.store(request.body), request.body.count)
        }
        let spooled: (path: String, size: Int)
        do { spooled = try file.finish() } catch {
            // A full disk is answered as every full-disk write is (`DiskFull`: 503, Retry-After, logged once a minute).
            if DiskFull.matches(error) { throw error }
            var unavailable = CloudKitError(.tryAgainLater, "the upload could not be written: \(error.reason)")
            unavailable.retryAfter = 30
            throw unavailable
        }
        guard spooled.size <= limit else { throw CloudKitError(.limitExceeded, tooLarge) }
        let stored = try files.store(movingFileAt: spooled.path)
        return (stored.checksum, stored.size)
    }

    /// A record's asset field's `downloadURL`: signed for `reader` when a signer is given (see
    /// `AssetURLSigner`), otherwise one that needs the caller's credentials.
    static func downloadURL(base: String, container: String, environment: String, database: String, record: Record,
                            field: String, checksum: String, reader: String? = nil, signer: AssetURLSigner? = nil,
                            now: Int64 = Clock.milliseconds() / 1000) -> String {
        // In the shared database the zone is named with its owner.
        let zone = database == DatabaseType.shared.rawValue ? [record.zoneID.ownerRecordName ?? "", record.zoneID.zoneName] : [record.zoneID.zoneName]
        let parts = [container, environment, database] + zone + [record.recordName, field, checksum]
        let url = base + downloadPrefix + parts.map(Self.escape).joined(separator: "/")
        guard let signer, let reader, !reader.isEmpty else { return url }
        let expires = AssetURLSigner.expiry(now: now)
        let signature = signer.signature(path: downloadPrefix + parts.joined(separator: "/"), reader: reader, expires: expires)
        return url + "?e=\(expires)&r=\(escape(reader))&s=\(signature)"
    }

    static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? segment
    }

    /// GET /assets/1/{container}/{environment}/private/{zone}/{record}/{field}/{checksum}, or
    /// .../shared/{ownerRecordName}/{zone}/... for a participant: the bytes, when the reader may
    /// read the record and the field still holds that asset. The reader is the one a signed URL
    /// names (`e`, `r`, `s`; no credentials needed), or else the authenticated caller.
    ///
    /// Answers carry `accept-ranges: bytes`, an `etag` (the checksum) and `cache-control`
    /// (`private, max-age` up to the signed URL's expiry; `private, no-cache` otherwise). A single
    /// `range: bytes=...` gets 206 with `content-range`; an unsatisfiable one 416; several ranges
    /// get the whole asset. A forged signature is `NOT_FOUND`, like an asset the reader cannot
    /// see; an expired one is `ACCESS_DENIED` (fetch the record again for a fresh URL).
    func download(_ context: inout RequestContext, authenticator: Authenticator) throws -> HTTPResponse {
        var parts = context.request.head.path.dropFirst(Self.downloadPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            .map { String($0).removingPercentEncoding ?? String($0) }
        let database = parts.count > 2 ? DatabaseType(rawValue: parts[2]) : nil
        var owner: String?
        if database == .shared && parts.count == 8 { owner = parts.remove(at: 3) }
        guard parts.count == 7, let environment = Environment(rawValue: parts[1]), let database, database != .public else {
            throw CloudKitError(.notFound, "not an asset download URL")
        }
        context.container = parts[0]
        context.environment = environment
        context.database = database
        let now = Clock.milliseconds() / 1000
        let reader: String
        var maxAge: Int64?
        if let signature = context.parameters["s"] {
            guard let signer, let expiresText = context.parameters["e"], let expires = Int64(expiresText),
                  let signed = context.parameters["r"], !signed.isEmpty,
                  signer.isValid(signature: signature, path: context.request.head.path, reader: signed, expires: expires) else {
                throw CloudKitError(.notFound, "asset not found")
            }
            guard expires > now else {
                throw CloudKitError(.accessDenied, "this download URL expired; fetch the record again for a fresh downloadURL")
            }
            reader = signed
            maxAge = expires - now
        } else {
            context.user = try authenticator.user(headers: context.request.head.headers["authorization"], parameters: context.parameters,
                                                  container: parts[0], signInURL: context.baseURL + "/signin")
            reader = context.user!.recordName
        }
        let scope = RequestScope(database: DatabaseScope(container: parts[0], environment: environment, database: database, owner: reader),
                                 user: reader, deviceID: "", baseURL: context.baseURL)
        let (zoneName, recordName, field, checksum) = (parts[3], parts[4], parts[5], parts[6])
        let holds = try store.read { reader -> Bool in
            guard let (access, _) = try? RecordService.resolve(reader, scope, ZoneID(zoneName: zoneName, ownerRecordName: owner)),
                  let found = try reader.recordWithMembership(zone: access.zone, name: recordName),
                  access.decide(.read, membership: found.membership).isAllowed,
                  let value = found.record.fields[field] else { return false }
            return value.elements.contains { if case .asset(let a) = $0 { a.fileChecksum == checksum } else { false } }
        }
        guard holds, let path = store.assets.path(forChecksum: checksum) else {
            throw CloudKitError(.notFound, "asset not found")
        }
        let cache = maxAge.map { "private, max-age=\($0), immutable" } ?? "private, no-cache"
        // The bytes are whatever an app saved (HTML included): a download, never a page of this
        // origin (C64). The console's `<img>` previews ignore `content-disposition`.
        let headers: [(String, String)] = [("content-type", "application/octet-stream"), ("accept-ranges", "bytes"),
                                           ("etag", "\"\(checksum)\""), ("cache-control", cache),
                                           ("content-disposition", "attachment")] + WebPages.untrustedBytesHeaders
        if FileDownload.matches(ifNoneMatch: context.request.head.headers["if-none-match"], etag: "\"\(checksum)\"") {
            // The client holds these bytes already (RFC 9110 §13.1.2): 304 with the validators.
            return HTTPResponse(status: 304, headers: headers.filter { ["etag", "cache-control"].contains($0.0) })
        }
        guard let response = try FileDownload.response(path: path, headers: headers, rangeHeader: context.request.head.headers["range"],
                                                    uuid: context.uuid) else {
            throw CloudKitError(.notFound, "asset not found")
        }
        return response
    }
}
