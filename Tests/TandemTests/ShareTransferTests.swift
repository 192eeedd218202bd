import Foundation
import Synchronization
import Testing
import Tandem
import TandemTestSupport

/// Issue 23 item 2 through the SDK against a real server: a share made only when the item is
/// sent (`ShareTransferRepresentation`, decisions R13–R14). In `SharedWithYouTests` for its
/// accounts and conversations.
extension SharedWithYouTests {
    /// A new root record of `owner` in a new zone, saved, not shared.
    func unsharedRoot(of owner: Account) async throws -> Record {
        let zone = try await owner.container.privateDatabase.save(RecordZone(zoneName: unique("plans")))
        return try await owner.container.privateDatabase.save(Record(recordType: "Plan", recordID: Record.ID(recordName: unique("plan"), zoneID: zone.zoneID)))
    }

    /// Seed behaviour: a share existed only once the app saved it. A prepared item makes none
    /// until it is sent; sending makes it once (the closure runs once) and invites the
    /// conversation; sending again, or another item for the same root, reuses it without
    /// calling the closure.
    @Test func aPreparedShareIsMadeWhenSentOnceAndReusedAfter() async throws {
        let (ada, bob) = (try account("ada"), try account("bob"))
        let root = try await unsharedRoot(of: ada)
        let calls = Mutex(0)
        let item = ShareTransferRepresentation.prepareShare(container: ada.container, rootRecord: root.recordID) { share in
            calls.withLock { $0 += 1 }
            var share = share
            share.title = "Weekend plan"
            return share
        }
        let chat = try await ada.container.conversations.create(with: [bob.recordName], title: "Weekend")
        #expect(try await ada.container.privateDatabase.record(for: root.recordID).share == nil)
        #expect(calls.withLock { $0 } == 0)

        let sent = try await ada.container.conversations.send("let's plan", sharing: item, in: chat.id)
        #expect(calls.withLock { $0 } == 1)
        let shareID = try #require(try await ada.container.privateDatabase.record(for: root.recordID).share?.recordID)
        let share = try #require(Share(try await ada.container.privateDatabase.record(for: shareID)))
        let url = try #require(share.url)
        #expect(share.title == "Weekend plan")
        #expect(sent.links.map(\.url) == [url])
        // Collaborate is the default: Bob is invited.
        #expect(try await bob.container.shareMetadata(for: url).participantStatus == .pending)

        try await ada.container.conversations.send("still on?", sharing: item, in: chat.id)
        let again = ShareTransferRepresentation.prepareShare(container: ada.container, rootRecord: root.recordID) { _ in
            Issue.record("the closure ran for a root that has a share")
            throw CancellationError()
        }
        #expect(try await again.share().recordID == shareID)
        #expect(calls.withLock { $0 } == 1)
        let messages = try await bob.container.conversations.messages(in: chat.id).events.filter { $0.kind == .message }
        #expect(messages.count == 2 && messages.allSatisfy { $0.links.map(\.url) == [url] })
    }

    /// Seed behaviour: none. A preparation closure that throws makes nothing and sends nothing;
    /// its error comes out as it is, and the next send tries again.
    @Test func aPreparationThatThrowsMakesNothingAndSendsNothing() async throws {
        struct Declined: Error {}
        let (ada, bob) = (try account("ada"), try account("bob"))
        let root = try await unsharedRoot(of: ada)
        let fail = Mutex(true)
        let item = ShareTransferRepresentation.prepareShare(container: ada.container, rootRecord: root.recordID) { share in
            if fail.withLock({ $0 }) { throw Declined() }
            return share
        }
        let chat = try await ada.container.conversations.create(with: [bob.recordName])
        await #expect(throws: Declined.self) { try await ada.container.conversations.send("here", sharing: item, in: chat.id) }
        #expect(try await ada.container.privateDatabase.record(for: root.recordID).share == nil)
        #expect(try await bob.container.conversations.messages(in: chat.id).events.allSatisfy { $0.kind != .message })

        fail.withLock { $0 = false }
        let share = try await item.share()
        #expect(try await ada.container.privateDatabase.record(for: root.recordID).share?.recordID == share.recordID)
    }

    /// A zone-wide item (`CKShare(recordZoneID:)`) is made on first use and found after.
    @Test func aPreparedZoneShareIsMadeOnceAndFoundAfter() async throws {
        let ada = try account("ada")
        let zone = try await ada.container.privateDatabase.save(RecordZone(zoneName: unique("board")))
        let calls = Mutex(0)
        let prepare: @Sendable (Share) async throws -> Share = { share in
            calls.withLock { $0 += 1 }
            var share = share
            share.publicPermission = .readOnly
            return share
        }
        let first = try await ShareTransferRepresentation.prepareShare(container: ada.container, zoneID: zone.zoneID, preparation: prepare).share()
        let second = try await ShareTransferRepresentation.prepareShare(container: ada.container, zoneID: zone.zoneID, preparation: prepare).share()
        #expect(first.recordID.recordName == Share.zoneWideShareRecordName)
        #expect(second.recordID == first.recordID && second.url == first.url)
        #expect(second.publicPermission == .readOnly)
        #expect(calls.withLock { $0 } == 1)
    }
}
