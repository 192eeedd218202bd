import Foundation
import Testing
import TandemCore
import TandemHTTP
@testable import TandemServer

/// Which requests wait for a running worker (decisions E28): the database operations that only
/// read, by the method each is served with; never a write, which wants to wait in its group
/// commit beside the others, nor anything that may hold its worker for long.
struct RunningWorkerLimitTests {
    static let database = "/database/1/iCloud.com.example.notes/development/private"

    @Test(arguments: [
        ("POST", database + "/records/lookup", true),
        ("POST", database + "/records/query", true),
        ("GET", database + "/zones/list", true),
        ("POST", database + "/zones/lookup", true),
        ("POST", database + "/changes/database", true),
        ("POST", database + "/changes/zone", true),
        ("POST", database + "/records/changes", true),
        ("GET", database + "/subscriptions/list", true),
        ("POST", database + "/records/modify", false),
        ("POST", database + "/zones/modify", false),
        ("POST", database + "/subscriptions/modify", false),
        ("POST", database + "/zones/list", false),
        ("GET", database + "/records/lookup", false),
        ("POST", "/device/1/iCloud.com.example.notes/development/tokens/create", false),
        ("POST", "/tandem/1/iCloud.com.example.notes/development/records/lookup", false),
        ("POST", "/auth/1/iCloud.com.example.notes/signin", false),
        ("GET", "/console/", false),
    ])
    func onlyDatabaseReadsRunBriefly(method: String, path: String, brief: Bool) {
        #expect(APIRouter.isBrief(HTTPRequestHead(method: method, path: path)) == brief, "\(method) \(path)")
    }

    /// Each brief operation is a route the server serves with that method (its OpenAPI
    /// document lists every route), so none is brief only on paper.
    @Test func everyBriefOperationIsServedWithItsMethod() throws {
        let server = try Shared.server
        let document = try server.request("GET", server.baseURL + "/openapi.json", token: .some(nil)).json
        for (method, suffix) in APIRouter.briefOperations {
            let path = "/database/1/{container}/{environment}/{database}" + suffix
            #expect(document["paths"]?[path]?[method.lowercased()] != nil, "\(method) \(path)")
        }
    }
}
