import TandemCore
import TandemHTTP
import TandemStore

/// Universal links under `/tandem/1/{container}/{environment}/links/`: the server's view of
/// whether a URL opens an app, and the administrator's upload and refresh of a domain's file.
enum LinkRoutes {
    static func tandemRoutes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "links/match", method: "GET", databases: [],
                          summary: "Whether a URL opens an app (?url=…&app=TEAMID.bundle.id): decision, rule and the domain file used",
                          requestSchema: nil, responseSchema: "LinkMatch") { context in
                guard let url = context.parameters["url"], !url.isEmpty, let app = context.parameters["app"], !app.isEmpty else {
                    throw CloudKitError.badRequest("send ?url=https://…&app=TEAMID.bundle.id")
                }
                return Responses.json(try services.links.match(url: url, appID: app, container: context.container).json)
            },
        ]
    }

    /// `POST /tandem/1/{container}/{environment}/links/upload?domain=…` (the file as the body)
    /// and `…/links/refresh?domain=…`: the operator's, with an admin token
    /// (`Authorization: Bearer`, `tandem token create --admin`), as for schemas. Nil for other paths.
    static func adminRespond(_ context: RequestContext, _ services: Services) throws -> HTTPResponse? {
        // Every API request passes here first: one prefix test, not a split of its path (P69).
        guard context.request.head.path.hasPrefix("/tandem/1/") else { return nil }
        let segments = context.request.head.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard segments.count == 7, segments[1] == "tandem", segments[2] == "1", segments[5] == "links",
              segments[6] == "upload" || segments[6] == "refresh" else { return nil }
        guard context.request.head.method == "POST" else { throw MethodNotAllowed(allowed: "POST") }
        try SchemaRoutes.authenticateAdmin(context, services.store)
        let container = segments[3]
        guard try services.store.read({ try $0.containerExists(container) }) else {
            throw CloudKitError(.notFound, "no container '\(container)'")
        }
        guard let domain = context.parameters["domain"], !domain.isEmpty else { throw CloudKitError.badRequest("send ?domain=example.com") }
        let file = segments[6] == "upload"
            ? try services.links.upload(domain: domain, container: container, bytes: context.request.body)
            : try services.links.refresh(domain: domain, container: container)
        return Responses.json(describe(file))
    }

    static func describe(_ file: StoredAssociationFile) -> JSONValue {
        var object: JSONObject = ["domain": .string(file.domain), "source": .string(file.source.rawValue), "bytes": .int(Int64(file.body.count)),
                                  "storedAt": .int(file.storedAt), "version": .int(file.version)]
        if let expires = file.expiresAt { object["expiresAt"] = .int(expires) }
        return .object(object)
    }
}
