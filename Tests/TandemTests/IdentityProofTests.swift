import Foundation
import Testing
import Tandem

/// Custom collaborations' identities end to end (issue 8 scenario 4, D24): the owner is issued
/// identities for three people and confirms them; a recipient's device proves its identity over
/// a server challenge and is bound to the account; forged proofs, replayed challenges and
/// removed identities are refused.
@Suite("Identity proofs")
struct IdentityProofTests {
    let server = TestServer.shared

    struct Recipient {
        let recordName: String
        let container: Container
        let keys: [DeviceKey]
    }

    /// A new account with `devices` registered device keys.
    func recipient(_ name: String, devices: Int) async throws -> Recipient {
        let account = try server.addUser(email: "\(unique(name))@example.com", name: name)
        let container = server.container(token: account.token)
        var keys: [DeviceKey] = []
        for _ in 0..<devices {
            let key = try DeviceKey()
            #expect(try await container.registerDevice(key))
            #expect(try await !container.registerDevice(key), "registering again is a no-op")
            keys.append(key)
        }
        return Recipient(recordName: account.recordName, container: container, keys: keys)
    }

    func prove(_ who: Recipient, key: Int = 0, in collaboration: String) async throws -> CollaborationIdentity {
        let challenge = try await who.container.identityChallenge(forCollaboration: collaboration)
        let proof = try await who.container.signedIdentityProof(forCollaboration: collaboration, using: challenge, deviceKey: who.keys[key])
        return try await who.container.verifyIdentity(proof, signedData: challenge, inCollaboration: collaboration)
    }

    func refusal(_ body: () async throws -> Void) async -> TandemError? {
        do { try await body(); return nil } catch let error as TandemError { return error } catch { return nil }
    }

    @Test func threeIdentitiesProvenBoundAndRefused() async throws {
        let ada = server.ada
        let collaboration = unique("doc")
        let bob = try await recipient("bob", devices: 2), cy = try await recipient("cy", devices: 1), dee = try await recipient("dee", devices: 3)

        // The owner's participants update with three identities.
        let identities = try await ada.identities(for: [bob.recordName, cy.recordName, dee.recordName], inCollaboration: collaboration)
        #expect(identities.count == 3)
        #expect(Set(identities.values.map(\.rootHash)).count == 3)
        #expect(identities.values.allSatisfy { $0.rootHash.count == 32 })
        let again = try await ada.identities(for: [bob.recordName], inCollaboration: collaboration)
        #expect(again[bob.recordName] == identities[bob.recordName], "a person keeps the identity already issued")
        let confirmed = try await ada.updateParticipants(ofCollaboration: collaboration, added: Array(identities.values))
        #expect(confirmed.allSatisfy { $0.state == .active && $0.boundUserRecordID == nil })

        // Each recipient proves it from any of their devices and is bound to their account.
        let bobBound = try await prove(bob, key: 1, in: collaboration)
        #expect(bobBound.identity == identities[bob.recordName])
        #expect(bobBound.boundUserRecordID?.recordName == bob.recordName)
        #expect(try await prove(bob, key: 0, in: collaboration).boundUserRecordID?.recordName == bob.recordName)
        #expect(try await prove(cy, in: collaboration).identity == identities[cy.recordName])
        #expect(try await prove(dee, key: 2, in: collaboration).identity == identities[dee.recordName])
        let listed = try await ada.collaborationIdentities(collaboration)
        #expect(Set(listed.compactMap(\.boundUserRecordID?.recordName)) == [bob.recordName, cy.recordName, dee.recordName])

        // A replayed challenge: the same signed proof sent twice.
        let challenge = try await cy.container.identityChallenge(forCollaboration: collaboration)
        let proof = try await cy.container.signedIdentityProof(forCollaboration: collaboration, using: challenge, deviceKey: cy.keys[0])
        _ = try await cy.container.verifyIdentity(proof, signedData: challenge, inCollaboration: collaboration)
        let replay = await refusal { _ = try await cy.container.verifyIdentity(proof, signedData: challenge, inCollaboration: collaboration) }
        #expect(replay?.code == .permissionFailure)
        #expect(replay?.message.contains("already used") == true)

        // Forged: an outsider signs with her own key but presents Bob's inclusion hashes.
        let eve = try await recipient("eve", devices: 1)
        let bobChallenge = try await bob.container.identityChallenge(forCollaboration: collaboration)
        let bobProof = try await bob.container.signedIdentityProof(forCollaboration: collaboration, using: bobChallenge, deviceKey: bob.keys[0])
        let eveChallenge = try await eve.container.identityChallenge(forCollaboration: collaboration)
        var forged = bobProof
        forged.proof.publicKey = eve.keys[0].publicKey
        forged.signatureData = try eve.keys[0].signature(for: eveChallenge)
        let forgery = await refusal { _ = try await eve.container.verifyIdentity(forged, signedData: eveChallenge, inCollaboration: collaboration) }
        #expect(forgery?.code == .permissionFailure)
        #expect(forgery?.message.contains("does not lead to an identity") == true)
        // Forged: Bob's real proof with a signature that is not his key's.
        let eveChallenge2 = try await eve.container.identityChallenge(forCollaboration: collaboration)
        var stolen = bobProof
        stolen.signatureData = try eve.keys[0].signature(for: eveChallenge2)
        let badSignature = await refusal { _ = try await eve.container.verifyIdentity(stolen, signedData: eveChallenge2, inCollaboration: collaboration) }
        #expect(badSignature?.message.contains("signature does not verify") == true)
        // Someone else's challenge: Bob's challenge used by Eve with Bob's (replayed) proof.
        let foreign = await refusal { _ = try await eve.container.verifyIdentity(bobProof, signedData: bobChallenge, inCollaboration: collaboration) }
        #expect(foreign?.message.contains("another account") == true)
        // An outsider has no proof at all, and cannot issue or change identities of Ada's collaboration.
        #expect(await refusal { _ = try await eve.container.signedIdentityProof(forCollaboration: collaboration, using: eveChallenge, deviceKey: eve.keys[0]) }?.code == .unknownItem)
        #expect(await refusal { _ = try await eve.container.identities(for: [eve.recordName], inCollaboration: collaboration) }?.code == .permissionFailure)
        #expect(await refusal { try await eve.container.updateParticipants(ofCollaboration: collaboration, added: [], removed: [identities[bob.recordName]!]) }?.code == .permissionFailure)

        // Issued but not confirmed: refused until the owner's update adds it.
        let eveIdentity = try #require(try await ada.identities(for: [eve.recordName], inCollaboration: collaboration)[eve.recordName])
        #expect(await refusal { _ = try await prove(eve, in: collaboration) }?.message.contains("not confirmed") == true)
        try await ada.updateParticipants(ofCollaboration: collaboration, added: [eveIdentity])
        #expect(try await prove(eve, in: collaboration).boundUserRecordID?.recordName == eve.recordName)

        // Removed: Dee's identity is refused from now on (even with the proof Dee fetched before)
        // and Bob's binding is revoked.
        let deeProof = try await dee.container.signedIdentityProof(forCollaboration: collaboration, using: Data([1]), deviceKey: dee.keys[0]).proof
        let after = try await ada.updateParticipants(ofCollaboration: collaboration, added: [],
                                                     removed: [identities[dee.recordName]!, identities[bob.recordName]!])
        let bobAfter = try #require(after.first { $0.identity == identities[bob.recordName] })
        #expect(bobAfter.state == .removed && bobAfter.boundUserRecordID == nil)
        #expect(await refusal { _ = try await prove(dee, in: collaboration) }?.code == .unknownItem)
        let deeChallenge = try await dee.container.identityChallenge(forCollaboration: collaboration)
        let resigned = Person.SignedIdentityProof(proof: deeProof, signatureData: try dee.keys[0].signature(for: deeChallenge))
        let removed = await refusal { _ = try await dee.container.verifyIdentity(resigned, signedData: deeChallenge, inCollaboration: collaboration) }
        #expect(removed?.code == .permissionFailure)
        #expect(removed?.message.contains("removed") == true)
        // An unknown root hash in an update changes nothing.
        let unknown = await refusal { try await ada.updateParticipants(ofCollaboration: collaboration, added: [Person.Identity(rootHash: Data(count: 32))]) }
        #expect(unknown?.code == .unknownItem)
    }
}
