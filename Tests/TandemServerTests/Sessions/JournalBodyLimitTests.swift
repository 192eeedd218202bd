import Foundation
import Testing
import TandemCore

/// The journal's 100 MiB body limit is only for signed-in uploads of attachments: without
/// credentials (421, before the body is read: BodyAdmission), or for a preview image (1 MiB:
/// 413), a large body is refused before it is read.
@Suite struct JournalBodyLimitTests {
    @Test(arguments: [
        (path: "00000000-0000-0000-0000-000000000001?participantID=00000000-0000-0000-0000-000000000002", signedIn: false, status: 421),
        (path: "preview", signedIn: true, status: 413),
        (path: "preview", signedIn: false, status: 413),
    ])
    func largeBodiesAreRefusedEarly(path: String, signedIn: Bool, status: Int) throws {
        let server = try Shared.server
        let url = "\(server.baseURL)/journal/1/\(TestServer.container)/development/\(path)"
        let response: TestServer.Response
        do {
            response = try server.request("POST", url, body: Data(count: 3 << 20), token: signedIn ? .none : .some(nil),
                                          headers: ["Content-Type": "application/octet-stream"])
        } catch {
            // The server may answer 413 and close before the client finished writing the body
            // (a broken pipe on the client's side): refused early either way. Had the body been
            // read, the answer would have been 400.
            return
        }
        #expect(response.status == status, "\(response.text)")
    }
}
