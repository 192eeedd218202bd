import Foundation
import Testing
import Tandem

/// `LocalStore.canUpdateRecord` / `canDeleteRecord` say what the server does (issue 14 item
/// 10): for every role and record kind the store's answer is asked, then the server is asked by
/// trying the same change in an atomic batch that cannot commit (it also deletes a record that
/// does not exist), so nothing is written: an allowed change fails only with
/// `batchRequestFailed`, a refused one with its own error.
@Suite("Permission parity")
struct PermissionParityTests {
    enum Role: String, CaseIterable, Sendable {
        case owner, administrator, readOnlyAdministrator, readWrite, readOnly, publicReadWrite, publicReadOnly
    }

    enum Kind: String, CaseIterable, Sendable { case root, child, share }

    /// The truth the policy states (AccessPolicy; decisions T13, D5, D6): (kind, deleting) → allowed.
    static func expected(_ role: Role, _ kind: Kind, deleting: Bool) -> Bool {
        switch (role, kind, deleting) {
        case (.owner, _, _): true
        case (_, .share, true): true                                   // a participant deleting the share leaves it
        case (.administrator, .share, false), (.readOnlyAdministrator, .share, false): true
        case (_, .share, false): false
        case (_, .root, true): false                                   // only the owner deletes a root
        case (.administrator, _, _), (.readWrite, _, _), (.publicReadWrite, _, _): true
        default: false
        }
    }

    @Test(arguments: Role.allCases)
    func storeAnswersAsTheServerDecides(_ role: Role) async throws {
        let server = TestServer.shared
        let ada = server.ada
        let zone = try await ada.privateDatabase.save(RecordZone(zoneName: unique("parity")))
        var root = Record(recordType: "Note", recordID: Record.ID(recordName: unique("root"), zoneID: zone.zoneID))
        root["title"] = "root"
        var child = Record(recordType: "Note", recordID: Record.ID(recordName: unique("child"), zoneID: zone.zoneID))
        child["title"] = "child"
        child.setParent(root.recordID)
        var share = Share(rootRecord: root)
        var actor = ada
        if role != .owner {
            let email = "\(unique(role.rawValue).lowercased())@example.com"
            actor = server.container(token: try server.addUser(email: email, name: "Parity Tester").token)
            switch role {
            case .publicReadWrite: share.publicPermission = .readWrite
            case .publicReadOnly: share.publicPermission = .readOnly
            default:
                let permission: Share.ParticipantPermission = role == .readOnly || role == .readOnlyAdministrator ? .readOnly : .readWrite
                let type: Share.ParticipantRole = role == .administrator || role == .readOnlyAdministrator ? .administrator : .privateUser
                share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: email), permission: permission, role: type))
            }
        }
        let saved = try await ada.privateDatabase.modifyRecords(saving: [root, child, share.record], deleting: [])
        #expect(saved.partialFailure == nil)
        let url = try #require(Share(try saved.saveResults[share.recordID]!.get())?.url)
        if role != .owner { _ = try await actor.accept(try await actor.shareMetadata(for: url)) }

        let database = role == .owner ? actor.privateDatabase : actor.sharedDatabase
        func seen(_ id: Record.ID) -> Record.ID { role == .owner ? id : id.shared(owner: server.adaRecordName) }
        let ids: [Kind: Record.ID] = [.root: seen(root.recordID), .child: seen(child.recordID), .share: seen(share.recordID)]
        let store = try makeStore(actor, automaticallySync: false)
        try await store.sync()
        let missing = Record.ID(recordName: unique("missing"), zoneID: ids[.root]!.zoneID)

        for kind in Kind.allCases {
            let id = ids[kind]!
            for deleting in [false, true] {
                let local = deleting ? try store.canDeleteRecord(id) : try store.canUpdateRecord(id)
                var record = try await database.record(for: id)
                if kind != .share { record["title"] = "changed" }
                let attempt = deleting
                    ? try await database.modifyRecords(saving: [], deleting: [id, missing], atomically: true).deleteResults[id]
                    : try await database.modifyRecords(saving: [record], deleting: [missing], atomically: true).saveResults[id].map { $0.map { _ in () } }
                var serverAllows = false
                if case .failure(let error) = try #require(attempt) { serverAllows = error.code == .batchRequestFailed }
                let what = "\(role) \(deleting ? "delete" : "update") \(kind)"
                #expect(local == serverAllows, "\(what): store says \(local), server \(serverAllows)")
                #expect(serverAllows == Self.expected(role, kind, deleting: deleting), "\(what)")
            }
        }
    }
}
