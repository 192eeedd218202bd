import Foundation
import Testing
import TandemCore

/// /healthz, /metrics (Prometheus text) and /openapi.json.
@Suite struct OperationsTests {
    @Test func healthzAnswersOK() throws {
        let server = try Shared.server
        let response = try server.request("GET", server.baseURL + "/healthz", token: .some(nil))
        #expect(response.status == 200)
        #expect(response.json["status"] == "ok")
    }

    @Test func metricsCountRequestsPerEndpointWithHistograms() throws {
        let server = try Shared.server
        _ = try server.post("records/lookup", Body.lookup(["m"]))
        let text = try server.request("GET", server.baseURL + "/metrics", token: .some(nil)).text
        #expect(text.contains(#"tandem_http_requests_total{endpoint="records/lookup",status="200"}"#))
        #expect(text.contains(#"tandem_http_request_duration_seconds_bucket{endpoint="records/lookup",le="+Inf"}"#))
        #expect(text.contains("tandem_http_request_duration_seconds_count{endpoint=\"records/lookup\"}"))
        let open = text.split(separator: "\n").first { $0.hasPrefix("tandem_http_open_connections ") }
        let count = open.flatMap { Int($0.split(separator: " ").last!) }
        #expect((count ?? 0) >= 1)
    }

    @Test func openAPIDescribesEveryEndpointAndTheErrorBody() throws {
        let server = try Shared.server
        let response = try server.request("GET", server.baseURL + "/openapi.json", token: .some(nil))
        #expect(response.body.last == UInt8(ascii: "\n"), "ends with a newline, as every JSON answer (F5)")
        let document = response.json
        #expect(document["openapi"] == "3.1.0")
        let paths = document["paths"]?.objectValue?.keys ?? []
        for operation in ["records/modify", "records/lookup", "records/query", "zones/list", "zones/lookup", "zones/modify",
                          "assets/upload", "users/current", "users/caller", "users/discover", "users/lookup/email", "users/lookup/id",
                          "records/resolve", "records/accept"] {
            #expect(paths.contains("/database/1/{container}/{environment}/{database}/\(operation)"), "\(operation)")
        }
        for operation in ["shares/requestAccess", "shares/approveRequesters", "shares/denyRequesters", "shares/blockRequesters",
                          "shares/unblockIdentities", "users/discoverability"] {
            #expect(paths.contains("/tandem/1/{container}/{environment}/\(operation)"), "\(operation)")
        }
        let discover = document["paths"]?["/database/1/{container}/{environment}/{database}/users/discover"]
        #expect(discover?["get"] != nil && discover?["post"] != nil)
        // Every $ref names a component that exists.
        let text = String(decoding: JSONWriter.bytes(document), as: UTF8.self)
        let schemas = Set(document["components"]?["schemas"]?.objectValue?.keys ?? [])
        for part in text.components(separatedBy: "#/components/schemas/").dropFirst() {
            let name = String(part.prefix { $0 != "\"" })
            #expect(schemas.contains(name), "missing component \(name)")
        }
        for path in ["/healthz", "/metrics", "/openapi.json", "/upload/1/{token}", "/journal/1/{container}/{environment}/{sessionID}",
                     "/journal/1/{container}/{environment}/{sessionID}/{attachmentID}", "/journal/1/{container}/{environment}/preview"] {
            #expect(paths.contains(path), "\(path)")
        }
        for operation in ["conversations/create", "conversations/messages/send", "highlights/list", "identity/verify",
                          "collaborations/identities/issue"] {
            #expect(paths.contains("/tandem/1/{container}/{environment}/\(operation)"), "\(operation)")
        }
        let error = document["components"]?["schemas"]?["Error"]
        #expect(error?["required"] == ["uuid", "serverErrorCode", "reason"])
        let modify = document["paths"]?["/database/1/{container}/{environment}/{database}/records/modify"]?["post"]
        #expect(modify?["responses"]?["421"] != nil)
        #expect(modify?["responses"]?["409"] != nil)
    }
}
