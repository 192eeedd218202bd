import TandemCore
import TandemHTTP
import TandemSchema
import TandemStore

/// The admin endpoint for schemas, authenticated with an admin token
/// (`tandem token create --admin`, sent as `Authorization: Bearer <token>`):
///
/// - `GET  /tandem/1/{container}/{environment}/schema/export` → the `.ckdb` text (`text/plain`)
/// - `POST /tandem/1/{container}/{environment}/schema/import[?force=true]`, body the `.ckdb` text
/// - `POST /tandem/1/{container}/production/schema/promote[?force=true]` (development → production;
///   no body, and none needs to be sent: a POST without a length is taken as empty, A40)
///
/// Import and promote answer `{"changes": [...], "dataLosingChanges": n, "reindexed": {type: records}}`,
/// and `"unsearchable": {type: [recordName]}` when records were over the full-text limit (P80).
/// User tokens are refused: a schema is the developer's, not an app user's.
enum SchemaRoutes {
    static func respond(_ context: RequestContext, _ services: Services) throws -> HTTPResponse? {
        // Every API request passes here first: one prefix test, not a split of its path (P69).
        guard context.request.head.path.hasPrefix("/tandem/1/") else { return nil }
        let segments = context.request.head.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // "", "tandem", "1", container, environment, "schema", operation
        guard segments.count == 7, segments[1] == "tandem", segments[2] == "1", segments[5] == "schema" else { return nil }
        let (container, operation) = (segments[3], segments[6])
        guard let environment = Environment(rawValue: segments[4]) else {
            throw CloudKitError.badRequest("environment must be 'development' or 'production', not '\(segments[4])'")
        }
        let method = context.request.head.method
        try authenticateAdmin(context, services.store)
        let service = SchemaService(store: services.store)
        let force = ["true", "1", "yes"].contains(context.parameters["force"]?.lowercased() ?? "")
        switch (operation, method) {
        case ("export", "GET"):
            let text = try service.export(container: container, environment: environment)
            return HTTPResponse(status: 200, headers: [("content-type", "text/plain; charset=utf-8")], body: Array(text.utf8))
        case ("import", "POST"):
            let text = String(decoding: context.request.body, as: UTF8.self)
            return outcome(try service.importSchema(text, file: "body", container: container, environment: environment, force: force))
        case ("promote", "POST"):
            guard environment == .production else {
                throw CloudKitError.badRequest("promote copies the development schema into production: POST /tandem/1/\(container)/production/schema/promote")
            }
            return outcome(try service.promote(container: container, force: force))
        case ("export", _): throw MethodNotAllowed(allowed: "GET")
        case ("import", _), ("promote", _): throw MethodNotAllowed(allowed: "POST")
        default: throw CloudKitError(.notFound, "unknown schema operation '\(operation)' (export, import, promote)")
        }
    }

    /// `POST /tandem/1/{container}/{environment}/schema/promote`: the one schema operation
    /// without a body, so it may come without a length (`curl -X POST`; A40, F44).
    static func isPromote(_ head: HTTPRequestHead) -> Bool {
        head.method == "POST" && head.path.hasPrefix("/tandem/1/") && head.path.hasSuffix("/schema/promote")
    }

    static func outcome(_ outcome: SchemaService.Outcome) -> HTTPResponse {
        let reindexed = JSONObject(outcome.reindexed.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.int(Int64($0.value))) })
        var body: JSONObject = ["changes": .array(outcome.changes.map { .string($0.description) }),
                                "dataLosingChanges": .int(Int64(outcome.changes.filter(\.losesData).count)),
                                "reindexed": .object(reindexed)]
        if !outcome.unsearchable.isEmpty {
            body["unsearchable"] = .object(JSONObject(outcome.unsearchable.sorted { $0.key < $1.key }.map {
                (key: $0.key, value: JSONValue.array($0.value.map(JSONValue.string)))
            }))
        }
        return Responses.json(.object(body))
    }

    /// - Throws: `AUTHENTICATION_REQUIRED` without a Bearer token, `AUTHENTICATION_FAILED`
    ///   for one that is not an admin token, or one revoked or expired (then with `tandemReason`
    ///   `SESSION_REVOKED` or `SESSION_EXPIRED`, decisions A14). Read from the store on every
    ///   request, so a revocation by the CLI applies at once.
    static func authenticateAdmin(_ context: RequestContext, _ store: any Store) throws {
        guard let header = context.request.head.headers["authorization"] else {
            throw CloudKitError(.authenticationRequired, "schema administration needs 'Authorization: Bearer <admin token>' (tandem token create --admin)")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer",
              let token = try store.read({ try $0.adminToken(hash: Tokens.hash(String(parts[1].withoutSurroundingSpaces))) }) else {
            throw CloudKitError(.authenticationFailed, "not an admin token (tandem token create --admin)")
        }
        if let refusal = token.refusal(at: Clock.milliseconds()) {
            var error = CloudKitError(.authenticationFailed, refusal.reason)
            error.tandemReason = refusal.kind.rawValue
            throw error
        }
    }
}
