internal import TandemCore

/// One of a container's three databases (CloudKit's `CKDatabase`): records, zones, queries,
/// change feeds and subscriptions. A small value; get it from `Container`.
///
/// Every method is one or a few HTTP requests to
/// `/database/1/{container}/{environment}/{public|private|shared}/...` and throws `TandemError`.
/// Retryable failures are retried first (`Container.Configuration.retryPolicy`).
public struct Database: Sendable {
    /// Which database (`CKDatabase.Scope`).
    public enum Scope: String, Sendable, Hashable {
        /// Records every user of the app can reach, governed by the schema's grants (SC7).
        case `public` = "public"
        /// The signed-in user's own zones and records.
        case `private` = "private"
        /// Zones other people shared with the signed-in user, as `{zoneName, ownerName}`.
        case shared = "shared"
    }

    /// Which database this is (`CKDatabase.databaseScope`).
    public let databaseScope: Scope
    let transport: Transport

    init(scope: Scope, transport: Transport) {
        databaseScope = scope
        self.transport = transport
    }

    func post(_ operation: String, _ body: JSONObject, retryingLostAnswers: Bool = true) async throws(TandemError) -> JSONValue {
        try await transport.json(transport.databaseURL(databaseScope, operation), body: .object(body), retryingLostAnswers: retryingLostAnswers)
    }

    func get(_ operation: String) async throws(TandemError) -> JSONValue {
        try await transport.json(transport.databaseURL(databaseScope, operation), body: nil)
    }

    /// The per-item error in an answer's item, if it is one.
    func itemError(_ json: JSONValue) -> TandemError? {
        ServerErrors.decode(json, scope: databaseScope)
    }
}

extension Array {
    /// The items of a JSON array under `key`, or an `internalError` naming the operation.
    static func items(_ json: JSONValue, _ key: String, in operation: String) throws(TandemError) -> [JSONValue] where Element == JSONValue {
        guard let items = json[key]?.arrayValue else { throw TandemError(.internalError, "\(operation) answered without '\(key)'") }
        return items
    }
}
