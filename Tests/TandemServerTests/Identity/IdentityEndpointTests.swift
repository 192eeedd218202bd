import Foundation
import Testing
import TandemCore

/// Bad input to the identity endpoints gets a CloudKit-style error with the right status and
/// writes nothing (the happy paths run through the SDK in Tests/TandemTests/IdentityProofTests).
@Suite struct IdentityEndpointTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var operation: String
        var method = "POST"
        var body: String?
        var signedIn = true
        var status: Int
        var code: String?
        var reason: String
        var testDescription: String { "\(operation) \(body ?? "") → \(status)" }
    }

    static let point = Data([0x04] + [UInt8](repeating: 7, count: 64)).base64EncodedString()
    static let cases: [Case] = [
        Case(operation: "identity/devices/register", body: "{}", status: 400, code: "BAD_REQUEST", reason: "'publicKey' must be base64"),
        Case(operation: "identity/devices/register", body: #"{"publicKey": "%%%"}"#, status: 400, code: "BAD_REQUEST", reason: "must be base64"),
        Case(operation: "identity/devices/register", body: #"{"publicKey": "\#(point)"}"#, status: 400, code: "BAD_REQUEST",
             reason: "uncompressed P-256 point"),
        Case(operation: "identity/devices/register", body: #"{"publicKey": "AAAA"}"#, status: 400, code: "BAD_REQUEST", reason: "65 bytes"),
        Case(operation: "identity/devices/register", method: "GET", status: 405, code: nil, reason: ""),
        Case(operation: "identity/devices/register", body: #"{"publicKey": "AAAA"}"#, signedIn: false, status: 421,
             code: "AUTHENTICATION_REQUIRED", reason: ""),
        Case(operation: "identity/challenge", body: "{}", status: 400, code: "BAD_REQUEST", reason: "'collaborationIdentifier' must be a string"),
        Case(operation: "identity/challenge", body: #"{"collaborationIdentifier": ""}"#, status: 400, code: "BAD_REQUEST", reason: "1 to 255 bytes"),
        Case(operation: "identity/challenge", body: "[1]", status: 400, code: "BAD_REQUEST", reason: ""),
        Case(operation: "identity/verify", body: #"{"collaborationIdentifier": "c"}"#, status: 400, code: "BAD_REQUEST", reason: "'proof' must be an object"),
        Case(operation: "identity/verify", body: #"{"collaborationIdentifier": "c", "proof": {"publicKey": "AAAA", "publicKeyIndex": -1, "inclusionHashes": []}, "signatureData": "AA==", "signedData": "AA=="}"#,
             status: 400, code: "BAD_REQUEST", reason: "publicKeyIndex"),
        Case(operation: "identity/verify", body: #"{"collaborationIdentifier": "c", "proof": {"publicKey": "AAAA", "publicKeyIndex": 0, "inclusionHashes": [7]}, "signatureData": "AA==", "signedData": "AA=="}"#,
             status: 400, code: "BAD_REQUEST", reason: "inclusionHashes[0]"),
        Case(operation: "identity/verify", body: #"{"collaborationIdentifier": "c", "proof": {"publicKey": "AAAA", "publicKeyIndex": 0, "inclusionHashes": []}, "signatureData": "AA==", "signedData": "AAECAw=="}"#,
             status: 403, code: "ACCESS_DENIED", reason: "not a challenge this server issued"),
        Case(operation: "identity/proof", body: #"{"collaborationIdentifier": "c", "publicKey": "AAAA"}"#, status: 404, code: "NOT_FOUND",
             reason: "no identity in collaboration"),
        Case(operation: "collaborations/identities/issue", body: #"{"collaborationIdentifier": "c", "userRecordNames": [1]}"#, status: 400,
             code: "BAD_REQUEST", reason: "must hold strings"),
        Case(operation: "collaborations/identities/issue", body: #"{"collaborationIdentifier": "c"}"#, status: 400,
             code: "BAD_REQUEST", reason: "'userRecordNames'"),
        Case(operation: "collaborations/identities/update", body: #"{"collaborationIdentifier": "c"}"#, status: 400,
             code: "BAD_REQUEST", reason: "send 'addedIdentities' or 'removedIdentities'"),
        Case(operation: "collaborations/identities/update", body: #"{"collaborationIdentifier": "c", "addedIdentities": ["AAAA"]}"#, status: 400,
             code: "BAD_REQUEST", reason: "root hash of 32 bytes"),
        Case(operation: "collaborations/identities/update", body: #"{"collaborationIdentifier": "never-issued", "removedIdentities": ["\#(Data(count: 32).base64EncodedString())"]}"#,
             status: 404, code: "NOT_FOUND", reason: "no identities were issued"),
        Case(operation: "collaborations/identities/list", method: "GET", status: 400, code: "BAD_REQUEST", reason: "1 to 255 bytes"),
    ]

    @Test(arguments: cases)
    func refused(_ c: Case) throws {
        let server = try Shared.server
        let url = "\(server.baseURL)/tandem/1/\(TestServer.container)/development/\(c.operation)"
        let response = try server.request(c.method, url, body: c.body.map { Data($0.utf8) }, token: c.signedIn ? .none : .some(nil))
        #expect(response.status == c.status, "\(response.text)")
        if let code = c.code {
            #expect(response.json["serverErrorCode"]?.stringValue == code, "\(response.text)")
            let reason = try #require(response.json["reason"]?.stringValue, "\(response.text)")
            #expect(c.reason.isEmpty || reason.contains(c.reason), "\(reason)")
        }
    }

    @Test("Issuing for a known and an unknown user writes nothing")
    func issueIsAllOrNothing() throws {
        let server = try Shared.server
        let base = "\(server.baseURL)/tandem/1/\(TestServer.container)/development/collaborations/identities"
        let collaboration = unique("doc")
        let body = #"{"collaborationIdentifier": "\#(collaboration)", "userRecordNames": ["\#(server.userRecordName)", "_nobody"]}"#
        let refused = try server.request("POST", "\(base)/issue", body: Data(body.utf8))
        #expect(refused.status == 404)
        #expect(refused.json["reason"]?.stringValue == "no user '_nobody'")
        let listed = try server.request("GET", "\(base)/list?collaborationIdentifier=\(collaboration)")
        #expect(listed.status == 404, "\(listed.text)")
    }
}
