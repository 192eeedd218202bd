import TandemCore
import TandemHTTP
import TandemStore

/// One CloudKit Web Services operation under `/database/1/{container}/{environment}/{database}/`.
struct DatabaseRoute: Sendable {
    /// `records/modify`, `zones/list`, ...
    var operation: String
    var method: String
    /// Database segments the operation is served for.
    var databases: Set<DatabaseType>
    var summary: String
    /// OpenAPI component names of the request and response bodies.
    var requestSchema: String?
    var responseSchema: String
    var handler: @Sendable (RequestContext) throws -> HTTPResponse
}
