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
            DatabaseRoute(operation: "links/upload", method: "POST", databases: [],
                          summary: "Administrators: store a domain's apple-app-site-association file (?domain=…, the file as the body, ckAPIToken of the container)",
                          requestSchema: nil, responseSchema: "AssociationFileInfo") { context in
                let domain = try administeredDomain(context)
                let file = try services.links.upload(domain: domain, container: context.container, bytes: context.request.body)
                return Responses.json(describe(file))
            },
            DatabaseRoute(operation: "links/refresh", method: "POST", databases: [],
                          summary: "Administrators: fetch a domain's apple-app-site-association file now (?domain=…, ckAPIToken of the container)",
                          requestSchema: nil, responseSchema: "AssociationFileInfo") { context in
                let domain = try administeredDomain(context)
                return Responses.json(describe(try services.links.refresh(domain: domain, container: context.container)))
            },
        ]
    }

    /// The `domain` parameter of an administrator's request. A container's API token is made
    /// only by the operator (`tandem token create --api`), so holding one is what makes an
    /// administrator here; the router has already checked it belongs to this container.
    private static func administeredDomain(_ context: RequestContext) throws -> String {
        guard context.parameters["ckAPIToken"] != nil else {
            throw CloudKitError(.accessDenied, "changing association files needs the container's API token (ckAPIToken) beside a signed-in user")
        }
        guard let domain = context.parameters["domain"], !domain.isEmpty else { throw CloudKitError.badRequest("send ?domain=example.com") }
        return domain
    }

    static func describe(_ file: StoredAssociationFile) -> JSONValue {
        var object: JSONObject = ["domain": .string(file.domain), "source": .string(file.source.rawValue), "bytes": .int(Int64(file.body.count)),
                                  "storedAt": .int(file.storedAt), "version": .int(file.version)]
        if let expires = file.expiresAt { object["expiresAt"] = .int(expires) }
        return .object(object)
    }
}
