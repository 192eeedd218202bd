import TandemCore

/// Component schemas for device keys and identity proofs (SharedWithYou `SWPersonIdentityProof`,
/// D24). Byte strings are standard base64.
extension OpenAPISchemas {
    static var identity: JSONObject {
        let base64: JSONValue = ["type": "string", "format": "byte"]
        let proof = object(["publicKey": base64, "publicKeyIndex": integer, "inclusionHashes": array(base64)],
                           required: ["publicKey", "publicKeyIndex", "inclusionHashes"])
        let identity = object(["rootHash": base64, "state": ["type": "string", "enum": ["issued", "active", "removed"]],
                               "boundUserRecordName": string, "createdAt": integer, "boundAt": integer])
        return [
            "DeviceKeyRequest": object(["publicKey": base64], required: ["publicKey"]),
            "DeviceKey": object(["publicKey": base64, "registered": boolean]),
            "DeviceKeys": object(["devices": array(object(["publicKey": base64, "createdAt": integer]))]),
            "CollaborationRequest": object(["collaborationIdentifier": string], required: ["collaborationIdentifier"]),
            "IdentityProofRequest": object(["collaborationIdentifier": string, "publicKey": base64],
                                           required: ["collaborationIdentifier", "publicKey"]),
            "IdentityProof": proof,
            "IdentityChallenge": object(["challenge": base64, "expiresAt": integer]),
            "IdentityVerifyRequest": object(["collaborationIdentifier": string, "proof": proof, "signatureData": base64, "signedData": base64],
                                            required: ["collaborationIdentifier", "proof", "signatureData", "signedData"]),
            "CollaborationIdentity": identity,
            "CollaborationIdentities": object(["identities": array(identity)]),
            "IssueIdentitiesRequest": object(["collaborationIdentifier": string, "userRecordNames": array(string)],
                                             required: ["collaborationIdentifier", "userRecordNames"]),
            "IssuedIdentities": object(["identities": array(object(["userRecordName": string, "rootHash": base64]))]),
            "UpdateIdentitiesRequest": object(["collaborationIdentifier": string, "addedIdentities": array(base64),
                                               "removedIdentities": array(base64)], required: ["collaborationIdentifier"]),
        ]
    }
}
