import Foundation
import Testing
import Tandem
import TandemTestSupport

/// Issue 23 item 3 through the SDK against a real server: the operator's allowed sharing
/// options per container (`tandem container sharing-options`), a share's narrowing of them, and
/// the server refusing what would grant outside them, writing nothing (decisions R15–R18). Each
/// test has a container of its own, so its policy touches no other test. In `SharedWithYouTests`
/// for its accounts.
extension SharedWithYouTests {
    /// A new container with the policy `arguments` (`--permission …`, `--access …`); what the CLI printed.
    func newContainer(_ arguments: [String]) throws -> (id: String, printed: String) {
        let id = "iCloud.com.example.\(unique("options").lowercased())"
        try TandemProcess.admin(["container", "create", id, "--data", server.dataDirectory])
        let printed = try TandemProcess.admin(["container", "sharing-options", id] + arguments + ["--data", server.dataDirectory])
        return (id, printed)
    }

    /// A new account, signed in to `container`.
    func account(_ name: String, in container: String) throws -> Account {
        let email = "\(unique(name).lowercased())@example.com"
        let added = try server.addUser(email: email, name: name.capitalized)
        return Account(recordName: added.recordName, email: email,
                       container: Container(identifier: container, environment: .development, serverURL: server.serverURL,
                                            credentials: .userToken(added.token)))
    }

    /// A root record in a new zone of `owner`, not saved.
    func documentRoot(of owner: Account) async throws -> Record {
        let zone = try await owner.container.privateDatabase.save(RecordZone(zoneName: unique("docs")))
        return Record(recordType: "Doc", recordID: Record.ID(recordName: unique("doc"), zoneID: zone.zoneID))
    }

    func save(_ records: [Record], by owner: Account) async throws -> ModifyRecordsResult {
        try await owner.container.privateDatabase.modifyRecords(saving: records, deleting: [])
    }

    func expectRefused(_ result: ModifyRecordsResult, _ share: Share, _ comment: Comment) {
        do {
            _ = try result.savedShare(share)
            Issue.record("saved outside the allowed sharing options: \(comment)")
        } catch {
            #expect(error.code == .invalidArguments, comment)
            #expect(error.message.contains("outside the allowed sharing options"), comment)
        }
    }

    /// Seed behaviour: any share save was accepted. Under a container's read-only, invited-only
    /// policy a public share, a read-write participant, a change to read-write, a read-write
    /// *Collaborate* and a read-write approval are each refused with nothing written; what the
    /// policy allows goes through.
    @Test func aContainerPolicyRefusesGrantsOutsideItAndWritesNothing() async throws {
        let (container, printed) = try newContainer(["--permission", "readOnly", "--access", "specifiedRecipientsOnly"])
        #expect(printed == "\(container): permission=READ_ONLY access=SPECIFIED_RECIPIENTS_ONLY")
        let (ada, bob, cat) = (try account("ada", in: container), try account("bob", in: container), try account("cat", in: container))

        let publicRoot = try await documentRoot(of: ada)
        var publicShare = Share(rootRecord: publicRoot)
        publicShare.publicPermission = .readOnly
        expectRefused(try await save([publicRoot, publicShare.record], by: ada), publicShare, "a public share")
        // Atomic: the root was not saved either.
        await #expect(throws: TandemError.self) { try await ada.container.privateDatabase.record(for: publicRoot.recordID) }

        let writerRoot = try await documentRoot(of: ada)
        var writerShare = Share(rootRecord: writerRoot)
        writerShare.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: bob.email), permission: .readWrite))
        expectRefused(try await save([writerRoot, writerShare.record], by: ada), writerShare, "a read-write participant")

        let docRoot = try await documentRoot(of: ada)
        var docShare = Share(rootRecord: docRoot)
        docShare.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: bob.email), permission: .readOnly))
        let saved = try await save([docRoot, docShare.record], by: ada).savedShare(docShare)
        let url = try #require(saved.url)

        // Bob's permission raised to read-write: refused, the share as it was.
        var raised = saved
        let bobs = try #require(raised.participants.first { $0.userIdentity.userRecordID?.recordName == bob.recordName })
        raised.removeParticipant(bobs)
        raised.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: bob.email), permission: .readWrite))
        expectRefused(try await save([raised.record], by: ada), raised, "a participant raised to read-write")
        let fetched = try #require(Share(try await ada.container.privateDatabase.record(for: saved.recordID)))
        #expect(fetched.participants.first { $0.userIdentity.userRecordID?.recordName == bob.recordName }?.permission == .readOnly)

        // Collaborate: read-write refused and nothing sent; read-only invites Cat.
        let chat = try await ada.container.conversations.create(with: [cat.recordName])
        do {
            try await ada.container.conversations.send("edit with me \(url)", in: chat.id, mode: .collaborate(permission: .readWrite))
            Issue.record("a read-write Collaborate went through a read-only policy")
        } catch { #expect(error.code == .invalidArguments) }
        #expect(try await cat.container.conversations.messages(in: chat.id).events.allSatisfy { $0.kind != .message })
        do { #expect(try await cat.container.shareMetadata(for: url).participantStatus == .unknown, "Cat was invited by a refused send") }
        catch { #expect(error.code == .unknownItem) }
        try await ada.container.conversations.send("read this \(url)", in: chat.id, mode: .collaborate(permission: .readOnly))
        #expect(try await cat.container.shareMetadata(for: url).participantPermission == .readOnly)

        // An approval: read-write refused (the request stays), read-only approved.
        var requestable = try #require(Share(try await ada.container.privateDatabase.record(for: saved.recordID)))
        requestable.allowsAccessRequests = true
        requestable = try await save([requestable.record], by: ada).savedShare(requestable)
        let rita = try account("rita", in: container)
        try await rita.container.requestShareAccess(for: [url])
        let asked = try #require(Share(try await ada.container.privateDatabase.record(for: saved.recordID)))
        do {
            _ = try await ada.container.approveRequesters(asked.requesters, of: asked, permission: .readWrite)
            Issue.record("a read-write approval went through a read-only policy")
        } catch { #expect(error.code == .invalidArguments) }
        let stillAsking = try #require(Share(try await ada.container.privateDatabase.record(for: saved.recordID)))
        #expect(stillAsking.requesters.count == 1)
        let approved = try await ada.container.approveRequesters(stillAsking.requesters, of: stillAsking, permission: .readOnly)
        #expect(approved.requesters.isEmpty)
    }

    /// Seed behaviour: none. An app narrows a permissive container per share; the share keeps
    /// its options (they come back on fetch), later saves are held to them, options that
    /// contradict the container's are refused, and `ShareTransferRepresentation` sets its
    /// options on the share it makes.
    @Test func aShareNarrowsTheContainerPolicyAndKeepsItsOptions() async throws {
        let (container, printed) = try newContainer([])
        #expect(printed == "\(container): permission=ANY access=ANY")
        let (ada, bob) = (try account("ada", in: container), try account("bob", in: container))
        let readOnly = AllowedSharingOptions(allowedParticipantPermissionOptions: .readOnly)

        let docRoot = try await documentRoot(of: ada)
        var share = Share(rootRecord: docRoot)
        share.allowedSharingOptions = readOnly
        let saved = try await save([docRoot, share.record], by: ada).savedShare(share)
        #expect(saved.allowedSharingOptions == readOnly)
        #expect(try #require(Share(try await ada.container.privateDatabase.record(for: saved.recordID))).allowedSharingOptions == readOnly)

        var writer = saved
        writer.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: bob.email), permission: .readWrite))
        expectRefused(try await save([writer.record], by: ada), writer, "read-write on a read-only share")
        var widened = saved
        widened.allowedSharingOptions = .standard
        widened.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: bob.email), permission: .readWrite))
        #expect(try await save([widened.record], by: ada).savedShare(widened).participants.count == 2)

        // The container narrowed to read-write only: a read-only share contradicts it.
        _ = try TandemProcess.admin(["container", "sharing-options", container, "--permission", "readWrite", "--data", server.dataDirectory])
        let otherRoot = try await documentRoot(of: ada)
        var contradicting = Share(rootRecord: otherRoot)
        contradicting.allowedSharingOptions = readOnly
        expectRefused(try await save([otherRoot, contradicting.record], by: ada), contradicting, "options with nothing in common")

        // A prepared item's options go on the share it makes; its closure sees them.
        let itemRoot = try await ada.container.privateDatabase.save(try await documentRoot(of: ada))
        let linkOnly = AllowedSharingOptions(allowedParticipantAccessOptions: .anyoneWithLink)
        let item = ShareTransferRepresentation.prepareShare(container: ada.container, allowedSharingOptions: linkOnly,
                                                            rootRecord: itemRoot.recordID) { share in
            #expect(share.allowedSharingOptions == linkOnly)
            var share = share
            share.publicPermission = .readWrite
            return share
        }
        let made = try await item.share()
        #expect(made.allowedSharingOptions == linkOnly && made.publicPermission == .readWrite)
        // Anyone-with-link only: making it private is refused.
        var closed = made
        closed.publicPermission = .none
        expectRefused(try await save([closed.record], by: ada), closed, "a link-only share made private")
    }

    /// The CLI: an unknown container or option is an error (exit 1), as `tandem app list` (F43).
    @Test func theCommandRefusesUnknownContainersAndOptions() throws {
        #expect(throws: (any Error).self) {
            try TandemProcess.admin(["container", "sharing-options", "iCloud.nowhere.\(unique("x"))", "--data", server.dataDirectory])
        }
        let (container, _) = try newContainer([])
        #expect(throws: (any Error).self) {
            try TandemProcess.admin(["container", "sharing-options", container, "--permission", "write", "--data", server.dataDirectory])
        }
        #expect(try TandemProcess.admin(["container", "sharing-options", container, "--access", "anyoneWithLink", "--data", server.dataDirectory])
                == "\(container): permission=ANY access=ANYONE_WITH_LINK")
    }
}
