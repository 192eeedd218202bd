import Foundation
import Synchronization
import Testing
import Tandem

/// `ShareObserver` (issue 23 item 10; decisions R8–R11): the owner's app hears that a share was
/// saved, accepted, asked about, left and stopped, from the change feed its sync engine reads.
@Suite("Share observers")
struct ShareObserverTests {
    let server = TestServer.shared

    /// A new account (email, container, record name): each test's owner has a private database of its own.
    func person(_ prefix: String, _ name: String) throws -> (email: String, container: Container, recordName: String) {
        let email = "\(unique(prefix).lowercased())@example.com"
        let (recordName, token) = try server.addUser(email: email, name: name)
        return (email, server.container(token: token), recordName)
    }

    /// Everything an observer reported, collected as it arrives.
    final class Heard: Sendable {
        private let events = Mutex<[ShareObserver.Event]>([])

        /// Reads `observer.events` until the observer is released (which ends the sequence).
        init(_ observer: ShareObserver) {
            let stream = observer.events
            Task { [weak self] in
                for await event in stream { self?.events.withLock { $0.append(event) } }
            }
        }

        var all: [ShareObserver.Event] { events.withLock { $0 } }

        /// Waits until `count` events have arrived (the observer yields them during the fetch
        /// that found them, so they are usually there at once), then returns them all.
        func waitFor(_ count: Int, within seconds: Double = 30) async throws -> [ShareObserver.Event] {
            try await eventually("\(count) share events (have \(kinds(all)))", within: seconds) { all.count >= count }
            return all
        }
    }

    @Test func anOwnersObserverSeesSavedAcceptedRequestedLeftAndStopped() async throws {
        let owner = try person("olive", "Olive Owner")
        let invitee = try person("ivan", "Ivan Invitee")
        let requester = try person("rhea", "Rhea Requester")
        let other = try person("una", "Una Uninvited")
        let engine = SyncEngine(configuration: .init(database: owner.container.privateDatabase, stateSerialization: nil,
                                                     delegate: Device(), automaticallySync: false))
        let observer = ShareObserver(syncEngine: engine)
        let heard = Heard(observer)
        try await engine.fetchChanges()

        let zone = try await owner.container.privateDatabase.save(RecordZone(zoneName: unique("album")))
        var root = Record(recordType: "Album", recordID: Record.ID(recordName: unique("album"), zoneID: zone.zoneID))
        root["title"] = "Summer"
        var share = Share(rootRecord: root)
        share.allowsAccessRequests = true
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: invitee.email), permission: .readWrite))
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: other.email)))
        let url = try #require(try await owner.container.privateDatabase.modifyRecords(saving: [root, share.record], deleting: [])
            .savedShare(share).url)
        try await engine.fetchChanges()
        var events = try await heard.waitFor(1)
        guard case .saved(let saved) = events[0] else { Issue.record("expected saved, got \(kinds(events))"); return }
        #expect(saved.recordID == share.recordID)
        #expect(saved.participants.contains { $0.userIdentity.lookupInfo?.emailAddress == invitee.email && $0.acceptanceStatus == .pending })

        try await invitee.container.accept(try await invitee.container.shareMetadata(for: url))
        try await engine.fetchChanges()
        events = try await heard.waitFor(2)
        guard case .accepted(_, let joined) = events[1] else { Issue.record("expected accepted, got \(kinds(events))"); return }
        #expect(joined.userIdentity.userRecordID?.recordName == invitee.recordName)
        #expect(joined.acceptanceStatus == .accepted)

        try await requester.container.requestShareAccess(for: [url])
        try await engine.fetchChanges()
        events = try await heard.waitFor(3)
        guard case .accessRequested(let asked, let who) = events[2] else { Issue.record("expected accessRequested, got \(kinds(events))"); return }
        #expect(who.userIdentity.userRecordID?.recordName == requester.recordName)
        #expect(asked.requesters.count == 1)

        // The invitee leaves: deleting the share in their shared database (D5).
        let sharedZone = try #require(try await invitee.container.sharedDatabase.allRecordZones().first { $0.zoneID.zoneName == zone.zoneID.zoneName })
        _ = try await invitee.container.sharedDatabase.deleteRecord(withID: Record.ID(recordName: share.recordID.recordName, zoneID: sharedZone.zoneID))
        try await engine.fetchChanges()
        events = try await heard.waitFor(4)
        guard case .left(let after, let leaver) = events[3] else { Issue.record("expected left, got \(kinds(events))"); return }
        #expect(leaver.userIdentity.userRecordID?.recordName == invitee.recordName)
        #expect(!after.participants.contains { $0.userIdentity.userRecordID?.recordName == invitee.recordName })

        // The owner removing someone is a save, not a leave.
        var current = try #require(Share(try await owner.container.privateDatabase.record(for: share.recordID)))
        let una = try #require(current.participants.first { $0.userIdentity.userRecordID?.recordName == other.recordName })
        current.removeParticipant(una)
        _ = try await owner.container.privateDatabase.modifyRecords(saving: [current.record], deleting: []).savedShare(current)
        try await engine.fetchChanges()
        events = try await heard.waitFor(5)
        guard case .saved(let removed) = events[4] else { Issue.record("expected saved, got \(kinds(events))"); return }
        #expect(!removed.participants.contains { $0.userIdentity.userRecordID?.recordName == other.recordName })

        // Answering a request is a save too.
        current = try #require(Share(try await owner.container.privateDatabase.record(for: share.recordID)))
        _ = try await owner.container.denyRequesters(current.requesters, of: current)
        try await engine.fetchChanges()
        events = try await heard.waitFor(6)
        guard case .saved(let answered) = events[5] else { Issue.record("expected saved, got \(kinds(events))"); return }
        #expect(answered.requesters.isEmpty)

        _ = try await owner.container.privateDatabase.deleteRecord(withID: share.recordID)
        try await engine.fetchChanges()
        events = try await heard.waitFor(7)
        #expect(events[6] == .stopped(share.recordID))

        // Nothing else was reported, and a fetch with nothing new reports nothing.
        try await engine.fetchChanges()
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(heard.all.count == 7)
        await engine.stop()
    }

    @Test func aLocalStoresObserverHearsOfAnAcceptanceByPushAndOfALeaveAfterARelaunch() async throws {
        let owner = try person("olga", "Olga Owner")
        let invitee = try person("ines", "Ines Invitee")
        let url = try temporaryStoreURL()
        var store = try LocalStore(container: owner.container, fileURL: url)
        var observer = ShareObserver(localStore: store)
        var heard = Heard(observer)

        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("note")))
        note["text"] = "hello"
        try store.save([note])
        let (_, made) = try await store.share([note.recordID], to: nil)
        var invited = made
        invited.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: invitee.email), permission: .readWrite))
        let share = try await store.persistUpdatedShare(invited)
        // No explicit fetch from here on: the store's engine fetches on the server's pushes.
        try await eventually("the invitation is heard as a save (have \(kinds(heard.all)))") {
            heard.all.contains { event in
                guard case .saved(let s) = event else { return false }
                return s.participants.contains { $0.userIdentity.lookupInfo?.emailAddress == invitee.email }
            }
        }
        try await invitee.container.accept(try await invitee.container.shareMetadata(for: try #require(share.url)))
        try await eventually("the acceptance is heard (have \(kinds(heard.all)))") {
            heard.all.contains { if case .accepted(_, let p) = $0 { p.userIdentity.userRecordID?.recordName == invitee.recordName } else { false } }
        }
        #expect(!heard.all.contains { if case .left = $0 { true } else { false } })

        // Relaunch: the new observer starts from the shares in the file.
        await store.close()
        store = try LocalStore(container: owner.container, fileURL: url, automaticallySync: false)
        observer = ShareObserver(localStore: store)
        heard = Heard(observer)
        let sharedZone = try #require(try await invitee.container.sharedDatabase.allRecordZones().first { $0.zoneID.zoneName == share.recordID.zoneID.zoneName })
        _ = try await invitee.container.sharedDatabase.deleteRecord(withID: Record.ID(recordName: share.recordID.recordName, zoneID: sharedZone.zoneID))
        try await store.sync()
        let events = try await heard.waitFor(1)
        guard case .left(_, let leaver) = events[0] else { Issue.record("expected left, got \(kinds(events))"); return }
        #expect(leaver.userIdentity.userRecordID?.recordName == invitee.recordName)
        #expect(leaver.acceptanceStatus == .accepted)
        await store.close()
    }
}

/// The events' case names, for failure messages short enough to read.
func kinds(_ events: [ShareObserver.Event]) -> [String] {
    events.map { event in
        switch event {
        case .saved: "saved"
        case .accepted: "accepted"
        case .left: "left"
        case .accessRequested: "accessRequested"
        case .stopped: "stopped"
        }
    }
}
