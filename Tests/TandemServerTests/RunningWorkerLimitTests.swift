import Foundation
import Testing
import TandemHTTP
@testable import TandemServer

/// Which requests wait for a running worker (decisions E28): the database operations that only
/// read; never a write, which wants to wait in its group commit beside the others, nor anything
/// that may hold its worker for long.
struct RunningWorkerLimitTests {
    static let database = "/database/1/iCloud.com.example.notes/development/private"

    @Test(arguments: [
        ("POST", database + "/records/lookup", true),
        ("POST", database + "/records/query", true),
        ("POST", database + "/zones/list", true),
        ("POST", database + "/zones/lookup", true),
        ("POST", database + "/records/changes", true),
        ("POST", database + "/zones/changes", true),
        ("POST", database + "/records/modify", false),
        ("POST", database + "/zones/modify", false),
        ("POST", database + "/subscriptions/modify", false),
        ("POST", database + "/records/resolve", false),
        ("POST", database + "/assets/upload", false),
        ("GET", database + "/records/lookup", false),
        ("POST", "/device/1/iCloud.com.example.notes/development/longpoll/records/lookup", false),
        ("POST", "/tandem/1/iCloud.com.example.notes/development/records/lookup", false),
        ("POST", "/auth/1/iCloud.com.example.notes/signin", false),
        ("GET", "/console/", false),
    ])
    func onlyDatabaseReadsRunBriefly(method: String, path: String, brief: Bool) {
        #expect(APIRouter.isBrief(HTTPRequestHead(method: method, path: path)) == brief, "\(method) \(path)")
    }
}
