import Foundation
import TandemTestSupport
import Testing
import Tandem

/// Notifications through `container.notifications`: muting one's own device, and reconnecting
/// after the connection drops.
@Suite("Push")
struct PushTests {
    @Test func ownDeviceChangesAreMutedWhenAsked() async throws {
        let server = TestServer.shared
        let laptop = server.container(token: server.adaToken, deviceID: unique("laptop"), notifyOwnChanges: false)
        let phone = server.container(token: server.adaToken, deviceID: unique("phone"))
        let zone = try await laptop.privateDatabase.save(RecordZone(zoneName: unique("muted")))
        let recordType = "Mute\(UUID().uuidString.prefix(6))"
        let subscriptionID = unique("mute")
        var subscription = QuerySubscription(recordType: recordType, subscriptionID: subscriptionID, options: .firesOnRecordCreation)
        subscription.zoneID = zone.zoneID
        try await laptop.privateDatabase.save(subscription)

        let writer = Task {
            var n = 0
            while !Task.isCancelled {
                n += 1
                for (container, prefix) in [(laptop, "own"), (phone, "other")] {
                    let id = Record.ID(recordName: "\(prefix)-\(n)", zoneID: zone.zoneID)
                    _ = try? await container.privateDatabase.save(Record(recordType: recordType, recordID: id))
                }
                try? await Task.sleep(nanoseconds: 200_000_000)
            }
        }
        defer { writer.cancel() }
        let names = try await withTimeout(30) {
            var names: [String] = []
            for try await notification in laptop.notifications where notification.subscriptionID == subscriptionID {
                names.append(notification.recordID?.recordName ?? "")
                if names.count == 3 { break }
            }
            return names
        }
        #expect(names.count == 3)
        #expect(names.allSatisfy { $0.hasPrefix("other-") }, "\(names)")
    }

    @Test func streamReconnectsAfterTheServerRestarts() async throws {
        let server = try TestServer()
        let container = server.ada
        let db = container.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "restarts"))
        try await db.save(RecordZoneSubscription(zoneID: zone.zoneID, subscriptionID: "restarts"))

        let (received, sink) = AsyncStream.makeStream(of: PushNotification.self)
        let listener = Task {
            for try await notification in container.notifications { sink.yield(notification) }
        }
        let timeout = Task {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            sink.finish()
        }
        defer { listener.cancel(); timeout.cancel() }
        var notifications = received.makeAsyncIterator()

        for phase in ["before", "after"] {
            if phase == "after" {
                server.kill()
                try server.start()
            }
            let writer = Task {
                var n = 0
                while !Task.isCancelled {
                    n += 1
                    let id = Record.ID(recordName: "\(phase)-\(n)", zoneID: zone.zoneID)
                    _ = try? await db.save(Record(recordType: "Ping", recordID: id))
                    try? await Task.sleep(nanoseconds: 300_000_000)
                }
            }
            let notification = await notifications.next()
            writer.cancel()
            #expect(notification?.subscriptionID == "restarts", "no notification \(phase) the restart")
        }
    }
}
