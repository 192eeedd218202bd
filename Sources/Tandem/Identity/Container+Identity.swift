public import Foundation
import TandemCore

/// Identity proofs for custom collaborations (SharedWithYou: `SWPerson.Identity`,
/// `SWHighlightCenter.signedIdentityProof(for:using:)`, and the server side of spec §1.8), over
/// `/tandem/1/{container}/{environment}/identity/…` and `…/collaborations/identities/…`.
///
/// Owner: `identities(for:inCollaboration:)` when sharing, then
/// `updateParticipants(ofCollaboration:added:removed:)` (the participants-update action).
/// Recipient: `registerDevice(_:)` once per device, then `identityChallenge(forCollaboration:)`,
/// `signedIdentityProof(forCollaboration:using:deviceKey:)` and `verifyIdentity(_:signedData:inCollaboration:)`.
extension Container {
    /// Registers this device's key with the signed-in account. Returns false when it was
    /// registered already. Register before a collaboration is shared with you: an identity is
    /// built from the devices registered at that moment (decision I3).
    /// - Throws: `TandemError` `.invalidArguments` for a key that is not P-256, `.serverRecordChanged`
    ///   (`CONFLICT`) when another account registered it, `.limitExceeded` past 16 devices.
    public func registerDevice(_ key: DeviceKey) async throws(TandemError) -> Bool {
        let json = try await transport.json(transport.tandemURL("identity/devices/register"),
                                            body: .object(["publicKey": .string(key.publicKey.base64EncodedString())]))
        return json["registered"]?.boolValue ?? false
    }

    /// The identities of `userRecordNames` in a collaboration the signed-in user owns (the first
    /// to ask becomes its owner), issued for a participants-update action. Keys are user record
    /// names. Up to 200 people per call.
    /// - Throws: `TandemError` `.permissionFailure` when someone else owns the collaboration,
    ///   `.unknownItem` for an unknown user.
    public func identities(for userRecordNames: [String], inCollaboration collaborationIdentifier: String) async throws(TandemError)
        -> [String: Person.Identity] {
        let json = try await transport.json(transport.tandemURL("collaborations/identities/issue"), body: .object([
            "collaborationIdentifier": .string(collaborationIdentifier),
            "userRecordNames": .array(userRecordNames.map { .string($0) }),
        ]))
        var result: [String: Person.Identity] = [:]
        for item in json["identities"]?.arrayValue ?? [] {
            guard let name = item["userRecordName"]?.stringValue, let hash = item["rootHash"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else { continue }
            result[name] = Person.Identity(rootHash: hash)
        }
        return result
    }

    /// The owner fulfils a participants-update action (`SWUpdateCollaborationParticipantsAction`):
    /// `added` identities can now be proven; `removed` ones are refused and lose their binding.
    /// Returns every identity of the collaboration.
    /// - Throws: `TandemError` `.permissionFailure` for anyone but the owner, `.unknownItem` for
    ///   an identity never issued in this collaboration (nothing changes then).
    @discardableResult
    public func updateParticipants(ofCollaboration collaborationIdentifier: String, added: [Person.Identity],
                                   removed: [Person.Identity] = []) async throws(TandemError) -> [CollaborationIdentity] {
        let json = try await transport.json(transport.tandemURL("collaborations/identities/update"), body: .object([
            "collaborationIdentifier": .string(collaborationIdentifier),
            "addedIdentities": .array(added.map { .string($0.rootHash.base64EncodedString()) }),
            "removedIdentities": .array(removed.map { .string($0.rootHash.base64EncodedString()) }),
        ]))
        return Self.collaborationIdentities(json)
    }

    /// A collaboration's identities with their state and bound accounts, for its owner.
    public func collaborationIdentities(_ collaborationIdentifier: String) async throws(TandemError) -> [CollaborationIdentity] {
        let url = Conversations(transport: transport).query("collaborations/identities/list", ["collaborationIdentifier": collaborationIdentifier])
        return Self.collaborationIdentities(try await transport.json(url, body: nil))
    }

    /// A single-use challenge (32 bytes) to sign, valid for 5 minutes (D24).
    public func identityChallenge(forCollaboration collaborationIdentifier: String) async throws(TandemError) -> Data {
        let json = try await transport.json(transport.tandemURL("identity/challenge"),
                                            body: .object(["collaborationIdentifier": .string(collaborationIdentifier)]))
        guard let challenge = json["challenge"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
            throw TandemError(.serverResponseLost, "identity/challenge answered without a challenge")
        }
        return challenge
    }

    /// This device's signed proof of the signed-in user's identity in a collaboration, over
    /// `data` (`SWHighlightCenter.signedIdentityProof(for:using:)`): fetches the inclusion proof
    /// of `deviceKey` and signs `data` with it.
    /// - Throws: `TandemError` `.unknownItem` when the user has no identity there holding this key.
    public func signedIdentityProof(forCollaboration collaborationIdentifier: String, using data: Data,
                                    deviceKey: DeviceKey) async throws(TandemError) -> Person.SignedIdentityProof {
        let json = try await transport.json(transport.tandemURL("identity/proof"), body: .object([
            "collaborationIdentifier": .string(collaborationIdentifier),
            "publicKey": .string(deviceKey.publicKey.base64EncodedString()),
        ]))
        guard let index = json["publicKeyIndex"]?.int64Value, let hashes = json["inclusionHashes"]?.arrayValue else {
            throw TandemError(.serverResponseLost, "identity/proof answered without a proof")
        }
        let proof = Person.IdentityProof(inclusionHashes: hashes.compactMap { $0.stringValue.flatMap { Data(base64Encoded: $0) } },
                                         publicKey: deviceKey.publicKey, publicKeyIndex: Int(index))
        return Person.SignedIdentityProof(proof: proof, signatureData: try deviceKey.signature(for: data))
    }

    /// Sends a signed proof over a challenge to be verified; on success the identity is bound to
    /// the signed-in account and returned.
    /// - Throws: `TandemError.permissionFailure` (`ACCESS_DENIED`) with the reason: challenge
    ///   unknown, used or expired; signature invalid; identity not in the collaboration, not yet
    ///   confirmed, removed, or bound to another account.
    public func verifyIdentity(_ signed: Person.SignedIdentityProof, signedData: Data,
                               inCollaboration collaborationIdentifier: String) async throws(TandemError) -> CollaborationIdentity {
        let json = try await transport.json(transport.tandemURL("identity/verify"), body: .object([
            "collaborationIdentifier": .string(collaborationIdentifier),
            "proof": .object([
                "publicKey": .string(signed.proof.publicKey.base64EncodedString()),
                "publicKeyIndex": .int(Int64(signed.proof.publicKeyIndex)),
                "inclusionHashes": .array(signed.proof.inclusionHashes.map { .string($0.base64EncodedString()) }),
            ]),
            "signatureData": .string(signed.signatureData.base64EncodedString()),
            "signedData": .string(signedData.base64EncodedString()),
        ]))
        guard let identity = Self.collaborationIdentity(json) else {
            throw TandemError(.serverResponseLost, "identity/verify answered without an identity")
        }
        return identity
    }

    static func collaborationIdentities(_ json: JSONValue) -> [CollaborationIdentity] {
        (json["identities"]?.arrayValue ?? []).compactMap(collaborationIdentity)
    }

    static func collaborationIdentity(_ json: JSONValue) -> CollaborationIdentity? {
        guard let hash = json["rootHash"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
              let state = json["state"]?.stringValue.flatMap(CollaborationIdentity.State.init(rawValue:)) else { return nil }
        return CollaborationIdentity(identity: Person.Identity(rootHash: hash), state: state,
                                     boundUserRecordID: json["boundUserRecordName"]?.stringValue.map { Record.ID(recordName: $0) })
    }
}
