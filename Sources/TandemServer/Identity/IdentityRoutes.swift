import Foundation
import TandemCore
import TandemCrypto
import TandemHTTP
import TandemStore

/// Identity proofs under `/tandem/1/{container}/{environment}/`: device keys (`identity/devices/…`),
/// the recipient's proof, challenge and verification (`identity/proof|challenge|verify`), and the
/// owner's side of a custom collaboration (`collaborations/identities/issue|update|list`).
/// Byte strings travel as standard base64. Field names follow SharedWithYou's
/// `SWPersonIdentityProof` (`publicKey`, `publicKeyIndex`, `inclusionHashes`) and
/// `SWSignedPersonIdentityProof` (`signatureData`).
enum IdentityRoutes {
    static func tandemRoutes(_ services: Services) -> [DatabaseRoute] {
        let identity = services.identity
        return [
            DatabaseRoute(operation: "identity/devices/register", method: "POST", databases: [],
                          summary: "Register one of the caller's device keys (P-256, uncompressed X9.63, base64)",
                          requestSchema: "DeviceKeyRequest", responseSchema: "DeviceKey") { context in
                let key = try bytes(try context.jsonBody(), "publicKey", field: "publicKey")
                let added = try identity.registerDevice(publicKey: key, scope: try signedIn(context))
                return Responses.json(.object(["publicKey": .string(base64(key)), "registered": .bool(added)]))
            },
            DatabaseRoute(operation: "identity/devices/list", method: "GET", databases: [],
                          summary: "The caller's registered device keys", requestSchema: nil, responseSchema: "DeviceKeys") { context in
                let devices = try identity.devices(scope: try signedIn(context))
                return Responses.json(.object(["devices": .array(devices.map {
                    .object(["publicKey": .string(base64($0.publicKey)), "createdAt": .int($0.createdAt)])
                })]))
            },
            DatabaseRoute(operation: "identity/proof", method: "POST", databases: [],
                          summary: "The inclusion proof of a device key in the caller's identity for a collaboration",
                          requestSchema: "IdentityProofRequest", responseSchema: "IdentityProof") { context in
                let body = try context.jsonBody()
                let proof = try identity.proof(collaboration: try collaboration(body), publicKey: try bytes(body, "publicKey", field: "publicKey"),
                                               scope: try signedIn(context))
                return Responses.json(.object(encode(proof)))
            },
            DatabaseRoute(operation: "identity/challenge", method: "POST", databases: [],
                          summary: "A single-use challenge to sign, valid 5 minutes (D24)",
                          requestSchema: "CollaborationRequest", responseSchema: "IdentityChallenge") { context in
                let challenge = try identity.challenge(collaboration: try collaboration(try context.jsonBody()), scope: try signedIn(context))
                return Responses.json(.object(["challenge": .string(base64(challenge.challenge)), "expiresAt": .int(challenge.expiresAt)]))
            },
            DatabaseRoute(operation: "identity/verify", method: "POST", databases: [],
                          summary: "Verify a signed identity proof over a challenge and bind the identity to the caller",
                          requestSchema: "IdentityVerifyRequest", responseSchema: "CollaborationIdentity") { context in
                let body = try context.jsonBody()
                guard let proofObject = body["proof"]?.objectValue else {
                    throw CloudKitError.badRequest("'proof' must be an object with publicKey, publicKeyIndex and inclusionHashes")
                }
                let proof = try decodeProof(proofObject)
                let signed = SignedIdentityProof(proof: proof, signatureData: try bytes(body, "signatureData", field: "signatureData"))
                let bound = try identity.verify(collaboration: try collaboration(body), proof: signed,
                                                signedData: try bytes(body, "signedData", field: "signedData"), scope: try signedIn(context))
                return Responses.json(encode(bound))
            },
            DatabaseRoute(operation: "collaborations/identities/issue", method: "POST", databases: [],
                          summary: "The owner's identities (root hashes) for people a collaboration is shared with",
                          requestSchema: "IssueIdentitiesRequest", responseSchema: "IssuedIdentities") { context in
                let body = try context.jsonBody()
                let users = try RequestContext.items(body, "userRecordNames", limit: IdentityService.identitiesPerRequest,
                                                     needed: "'userRecordNames' must be an array of user record names").map { item in
                    guard let name = item.stringValue, !name.isEmpty else { throw CloudKitError.badRequest("'userRecordNames' must hold strings") }
                    return name
                }
                let issued = try identity.identities(collaboration: try collaboration(body), users: users, scope: try signedIn(context))
                return Responses.json(.object(["identities": .array(users.uniqued().map {
                    .object(["userRecordName": .string($0), "rootHash": .string(base64(issued[$0] ?? []))])
                })]))
            },
            DatabaseRoute(operation: "collaborations/identities/update", method: "POST", databases: [],
                          summary: "The owner's participants update: confirm added identities, remove others",
                          requestSchema: "UpdateIdentitiesRequest", responseSchema: "CollaborationIdentities") { context in
                let body = try context.jsonBody()
                let added = try hashes(body, "addedIdentities"), removed = try hashes(body, "removedIdentities")
                guard !added.isEmpty || !removed.isEmpty else { throw CloudKitError.badRequest("send 'addedIdentities' or 'removedIdentities'") }
                let identities = try identity.updateParticipants(collaboration: try collaboration(body), added: added, removed: removed,
                                                                 scope: try signedIn(context))
                return Responses.json(.object(["identities": .array(identities.map(encode))]))
            },
            DatabaseRoute(operation: "collaborations/identities/list", method: "GET", databases: [],
                          summary: "A collaboration's identities for its owner (?collaborationIdentifier=…)",
                          requestSchema: nil, responseSchema: "CollaborationIdentities") { context in
                let id = context.parameters["collaborationIdentifier"] ?? ""
                let identities = try identity.list(collaboration: id, scope: try signedIn(context))
                return Responses.json(.object(["identities": .array(identities.map(encode))]))
            },
        ]
    }

    static func signedIn(_ context: RequestContext) throws -> RequestScope {
        guard context.user != nil else { throw CloudKitError(.authenticationRequired, "sign in: identities belong to accounts") }
        return context.scope
    }

    static func collaboration(_ body: JSONObject) throws -> String {
        guard let id = body["collaborationIdentifier"]?.stringValue else {
            throw CloudKitError.badRequest("'collaborationIdentifier' must be a string")
        }
        return id
    }

    static func bytes(_ body: JSONObject, _ key: String, field: String) throws -> [UInt8] {
        guard let text = body[key]?.stringValue, let data = Data(base64Encoded: text) else {
            throw CloudKitError.badRequest("'\(field)' must be base64")
        }
        return [UInt8](data)
    }

    static func hashes(_ body: JSONObject, _ key: String) throws -> [[UInt8]] {
        guard let value = body[key] else { return [] }
        guard let items = value.arrayValue, items.count <= IdentityService.identitiesPerRequest else {
            throw CloudKitError.badRequest("'\(key)' must be an array of at most \(IdentityService.identitiesPerRequest) base64 root hashes")
        }
        return try items.enumerated().map { index, item in
            guard let text = item.stringValue, let data = Data(base64Encoded: text), data.count == 32 else {
                throw CloudKitError.badRequest("'\(key)[\(index)]' must be a base64 root hash of 32 bytes")
            }
            return [UInt8](data)
        }
    }

    static func decodeProof(_ object: JSONObject) throws -> IdentityProof {
        guard let index = object["publicKeyIndex"]?.int64Value, index >= 0, index < 1 << 20 else {
            throw CloudKitError.badRequest("'proof.publicKeyIndex' must be a non-negative integer")
        }
        guard let items = object["inclusionHashes"]?.arrayValue, items.count <= 32 else {
            throw CloudKitError.badRequest("'proof.inclusionHashes' must be an array of at most 32 base64 hashes")
        }
        let hashes = try items.enumerated().map { offset, item in
            guard let text = item.stringValue, let data = Data(base64Encoded: text) else {
                throw CloudKitError.badRequest("'proof.inclusionHashes[\(offset)]' must be base64")
            }
            return [UInt8](data)
        }
        return IdentityProof(inclusionHashes: hashes, publicKey: try bytes(object, "publicKey", field: "proof.publicKey"),
                             publicKeyIndex: Int(index))
    }

    static func encode(_ proof: IdentityProof) -> JSONObject {
        ["publicKey": .string(base64(proof.publicKey)), "publicKeyIndex": .int(Int64(proof.publicKeyIndex)),
         "inclusionHashes": .array(proof.inclusionHashes.map { .string(base64($0)) })]
    }

    static func encode(_ identity: StoredIdentity) -> JSONValue {
        var object: JSONObject = ["rootHash": .string(base64(identity.rootHash)), "state": .string(identity.state.rawValue),
                                  "createdAt": .int(identity.createdAt)]
        if let user = identity.boundUser { object["boundUserRecordName"] = .string(user) }
        if let at = identity.boundAt { object["boundAt"] = .int(at) }
        return .object(object)
    }

    static func base64(_ bytes: [UInt8]) -> String { IdentityService.base64(bytes) }
}
