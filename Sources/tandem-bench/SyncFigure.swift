import Foundation
import Synchronization
import TandemCore
import TandemHTTP
import TandemSQLite
import TandemServer
import TandemStore
import TandemStoreSQLite

/// Issue 4's figures: catch-up throughput of `changes/zone` 100,000 changes behind;
/// write-to-notification latency with 1,000 stream subscribers at 500 writes/s; and what the
/// per-viewer database feed costs a zone shared with 100 participants.
enum SyncFigure {
    struct Result {
        var catchUpRecordsPerSecond: Double
        var catchUpRecords: Int
        var latencies: [Double]
        var sentWrites: Int
        var sharedCreates: Wrk.Result
        var unsharedCreates: Wrk.Result
        var memory: ServerMemory
    }

    static let subscribers = 1000
    static let writesPerSecond = 500.0
    static let participants = 100

    static func run(options: BenchOptions, report: Report) throws -> Result {
        report.section("sync: catch-up, notification latency, per-viewer feed cost (synchronous normal)")
        let directory = try BenchPaths.temporaryDirectory("sync")
        defer { BenchPaths.remove(directory) }
        let catchUpRecords = options.size.pick(full: 100_000, quick: 20_000, smoke: 2_000)
        // A first server run hands out the catch-up zone's token while it is still empty, as a
        // client's last fetch would have; then the records are written behind it.
        let account = try BenchAccount.prepare(in: directory)
        let first = ServerProcess(dataDirectory: directory, synchronous: .normal)
        try first.start()
        let http = BenchHTTP()
        let zones = JSONWriter.bytes(["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "catchup"]]]]])
        let created = try http.post(first.url + BenchAccount.databasePath + "/zones/modify", token: account.token, body: zones)
        first.stop()
        guard let catchUpToken = try JSONParser.parse([UInt8](created.body))["zones"]?.arrayValue?.first?["syncToken"]?.stringValue else {
            throw BenchError("zones/modify gave no syncToken: \(String(decoding: created.body.prefix(300), as: UTF8.self))")
        }
        var setup = try prepare(directory: directory, catchUpRecords: catchUpRecords, report: report)
        setup.catchUpToken = catchUpToken
        let server = ServerProcess(dataDirectory: directory, synchronous: .normal)
        try server.start()
        defer { server.stop() }
        let idle = server.memory().current
        let base = server.url + "/database/1/\(BenchAccount.container)/development"

        // 1. Catch-up: fetch the zone from the token taken before its records were written.
        let started = Date()
        let cpuBefore = server.cpuSeconds()
        var token = setup.catchUpToken
        var fetched = 0
        while true {
            let body = JSONWriter.bytes(["zones": [["zoneID": ["zoneName": "catchup"], "syncToken": .string(token)]], "resultsLimit": 1000])
            let (status, data) = try http.post(base + "/private/changes/zone", token: setup.owner.token, body: body)
            // A sync client stores the records; the bench only counts them and follows the token.
            let bytes = [UInt8](data)
            guard status == 200, ByteSearch.count(bytes, "serverErrorCode") == 0, let next = ByteSearch.stringValue(bytes, key: "syncToken") else {
                throw BenchError("changes/zone answered \(status): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            }
            fetched += ByteSearch.count(bytes, "\"recordChangeTag\"")
            token = next
            if ByteSearch.count(bytes, "\"moreComing\":true") == 0 { break }
        }
        let catchUpSeconds = Date().timeIntervalSince(started)
        let catchUpCPU = server.cpuSeconds() - cpuBefore
        guard fetched == catchUpRecords else { throw BenchError("catch-up fetched \(fetched) of \(catchUpRecords) records") }
        let rate = Double(fetched) / catchUpSeconds
        report.say("  changes/zone catch-up: \(Format.count(fetched)) records in \(Format.seconds(catchUpSeconds)) = \(Format.rate(rate)) (pages of 1,000, one client); "
                   + "server CPU \(Format.latency(catchUpCPU / Double(max(fetched, 1)))) per record")

        // 2. The per-viewer feed (before the stream clients connect, like the other create figures): creates into a zone shared with 100 participants vs an unshared one.
        let unshared = try Wrk.run(url: server.url, script: createScript(zone: "plain", owner: setup.owner), threads: 2, connections: 32,
                                   seconds: options.loadSeconds, serverCPU: server.cpuSeconds)
        let shared = try Wrk.run(url: server.url, script: createScript(zone: "crowded", owner: setup.owner), threads: 2, connections: 32,
                                 seconds: options.loadSeconds, serverCPU: server.cpuSeconds)
        report.wrkLine("records/modify create, unshared zone, -t2 -c32", unshared)
        report.wrkLine("records/modify create, zone shared with \(participants), -t2 -c32", shared)
        // 3. Latency: 1,000 stream clients, each subscribed to its own zone; 500 writes/s round-robin.
        let latencies = try measureLatency(server: server, setup: setup, http: http, seconds: options.size.pick(full: 10, quick: 4, smoke: 1), report: report)

        let memory = server.memory()
        return Result(catchUpRecordsPerSecond: rate, catchUpRecords: fetched, latencies: latencies.values, sentWrites: latencies.sent,
                      sharedCreates: shared, unsharedCreates: unshared,
                      memory: ServerMemory(label: "sync server", idle: idle, peak: memory.peak))
    }

    struct Setup {
        var owner: (recordName: String, token: String)
        var catchUpToken: String
        /// Per subscriber: token and zone name.
        var subscribers: [(token: String, zone: String)]
    }

    /// Users, zones, subscriptions and the catch-up zone, written through the store before the
    /// server opens the directory.
    private static func prepare(directory: String, catchUpRecords: Int, report: Report) throws -> Setup {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let account = try BenchAccount.prepare(store: store)
        let owner = account.userRecordName
        let scope = DatabaseScope(container: BenchAccount.container, environment: .development, database: .private, owner: owner)
        let now = Clock.milliseconds()
        // The catch-up zone: a token from before, then `catchUpRecords` creates.
        let zone = try store.write { try $0.ensureZone(scope, name: "catchup", at: now) }
        var written = 0
        while written < catchUpRecords {
            let first = written
            let last = min(catchUpRecords, first + 10_000)
            try store.write { tx in
                for i in first..<last {
                    let sequence = try tx.nextChangeSequence(zone)
                    let stamp = Record.Stamp(timestamp: now + Int64(i), userRecordName: owner)
                    let record = Record(recordName: "c-\(i)", recordType: "Item", recordChangeTag: "\(sequence)",
                                        fields: ["n": .int64(Int64(i)), "title": .string("Record number \(i)")], zoneID: zone.zoneID,
                                        created: stamp, modified: stamp)
                    try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
                }
            }
            written = last
        }
        // The zones of the feed-cost figure: one plain, one shared (zone-wide) with 100 participants.
        let plain = try store.write { try $0.ensureZone(scope, name: "plain", at: now) }
        _ = plain
        let crowded = try store.write { try $0.ensureZone(scope, name: "crowded", at: now) }
        var people: [String] = []
        for index in 0..<participants {
            let email = "participant\(index)@example.com"
            let user = try store.read { try $0.user(recordNameOrEmail: email) } ?? Admin.addUser(email: email, name: "P \(index)", store: store)
            people.append(user.recordName)
        }
        let everyone = people
        try store.write { tx in
            let share = try tx.putShare(StoredShare(key: 0, zone: crowded, recordName: Share.zoneWideRecordName, rootRecordName: nil,
                                                    shortGUID: "benchcrowdedzoneshare00000", publicPermission: .none,
                                                    allowsAccessRequests: false, createdAt: now))
            for person in everyone {
                try tx.putParticipant(StoredParticipant(participantID: UUID().uuidString, userRecordName: person, email: nil, phone: nil,
                                                        role: .privateUser, permission: .readWrite, status: .accepted,
                                                        isApprovedRequester: false, addedAt: now), share: share)
            }
            // As their acceptances would have: the zone is now in their shared databases.
            try tx.zoneActivity(crowded, container: BenchAccount.container, environment: .development, viewersChanged: true, at: now)
        }
        // Subscribers: one user, zone and zone subscription each.
        var subscribers: [(token: String, zone: String)] = []
        for index in 0..<Self.subscribers {
            let email = "subscriber\(index)@example.com"
            let user = try store.read { try $0.user(recordNameOrEmail: email) } ?? Admin.addUser(email: email, name: "S \(index)", store: store)
            let token = try Admin.createUserToken(for: user.recordName, store: store)
            let userScope = DatabaseScope(container: BenchAccount.container, environment: .development, database: .private, owner: user.recordName)
            let zoneName = "inbox-\(index)"
            try store.write { tx in
                _ = try tx.ensureZone(userScope, name: zoneName, at: now)
                try tx.putSubscription(StoredSubscription(key: 0, container: BenchAccount.container, environment: .development, scope: .private,
                                                          owner: user.recordName,
                                                          subscription: Subscription(subscriptionID: "inbox", kind: .zone,
                                                                                     zoneID: ZoneID(zoneName: zoneName))), at: now)
            }
            subscribers.append((token, zoneName))
        }
        report.say("  prepared \(Format.count(catchUpRecords)) catch-up records, \(participants) participants, \(subscribers.count) subscribers")
        return Setup(owner: (owner, account.token), catchUpToken: "", subscribers: subscribers)
    }

    private static func createScript(zone: String, owner: (recordName: String, token: String)) -> WrkScript {
        WrkScript(path: BenchAccount.databasePath + "/records/modify",
                  headers: [("Authorization", "Bearer \(owner.token)"), ("Content-Type", "application/json")],
                  bodyFormat: #"{"zoneID":{"zoneName":"\#(zone)"},"operations":[{"operationType":"create","record":{"recordType":"Note","#
                      + #""recordName":"w-%d-%d","fields":{"title":{"value":"Bench note"}}}}]}"#,
                  formatArguments: ["id", "n"], expect: "recordChangeTag")
    }

    /// Connects the subscribers, writes at `writesPerSecond` round-robin into their zones, and
    /// returns each notification's delay from the start of its write request, in seconds.
    private static func measureLatency(server: ServerProcess, setup: Setup, http: BenchHTTP, seconds: Int, report: Report) throws
        -> (values: [Double], sent: Int) {
        let state = LatencyState()
        let connected = DispatchSemaphore(value: 0)
        let subscribers = setup.subscribers
        let port = server.port
        Task {
            await withTaskGroup(of: Void.self) { group in
                for subscriber in subscribers {
                    group.addTask {
                        let url = URL(string: "ws://127.0.0.1:\(port)/stream/1/\(BenchAccount.container)/development")!
                        guard let client = try? await WebSocketClient.connect(to: url, headers: [("Authorization", "Bearer \(subscriber.token)")]) else { return }
                        state.clients.withLock { $0.append(client) }
                        Task {
                            for await event in client.events {
                                guard case .message(.text(let text)) = event, text.contains("\"notification\""),
                                      let zone = (try? JSONParser.parse(Array(text.utf8)))?["notification"]?["zoneID"]?["zoneName"]?.stringValue else { continue }
                                let now = Date().timeIntervalSince1970
                                if let sent = state.sentAt.withLock({ $0.removeValue(forKey: zone) }) { state.latencies.withLock { $0.append(now - sent) } }
                            }
                        }
                    }
                }
            }
            connected.signal()
        }
        connected.wait()
        let open = state.clients.withLock { $0.count }
        guard open == subscribers.count else { throw BenchError("only \(open) of \(subscribers.count) stream clients connected") }
        Thread.sleep(forTimeInterval: 0.5)
        // Paced writes on 4 threads, each writing every 4/writesPerSecond seconds.
        let total = Int(writesPerSecond) * seconds
        let threads = 4
        let interval = Double(threads) / writesPerSecond
        let failures = Atomic<Int>(0)
        let group = DispatchGroup()
        let base = server.url + "/database/1/\(BenchAccount.container)/development/private/records/modify"
        let begin = Date().timeIntervalSince1970 + 0.1
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var index = thread
                while index < total {
                    let due = begin + Double(index / threads) * interval
                    let wait = due - Date().timeIntervalSince1970
                    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                    let subscriber = subscribers[index % subscribers.count]
                    let body = JSONWriter.bytes(["zoneID": ["zoneName": .string(subscriber.zone)], "operations": [[
                        "operationType": "create", "record": ["recordType": "Note", "recordName": .string("n-\(index)"),
                                                              "fields": ["title": ["value": "hello"]]]]]])
                    state.sentAt.withLock { $0[subscriber.zone] = Date().timeIntervalSince1970 }
                    if (try? http.post(base, token: subscriber.token, body: body))?.status != 200 { failures.add(1, ordering: .relaxed) }
                    index += threads
                }
            }
        }
        group.wait()
        Thread.sleep(forTimeInterval: 1)
        state.clients.withLock { all in all.forEach { $0.close() } }
        let values = state.latencies.withLock { $0 }.sorted()
        report.say("  \(Format.count(total)) writes at \(Int(writesPerSecond))/s to \(subscribers.count) stream subscribers: "
                   + "\(Format.count(values.count)) notifications, \(failures.load(ordering: .relaxed)) failed writes")
        return (values, total)
    }
}

/// What the latency run's tasks and threads share.
private final class LatencyState: Sendable {
    let sentAt = Locked<[String: Double]>([:])
    let latencies = Locked<[Double]>([])
    let clients = Locked<[WebSocketClient]>([])
}

/// Byte-level scanning of JSON responses, so the client side of a throughput figure costs little.
enum ByteSearch {
    static func count(_ bytes: [UInt8], _ text: String) -> Int {
        let needle = Array(text.utf8)
        var found = 0
        var index = 0
        bytes.withUnsafeBufferPointer { haystack in
            while index + needle.count <= haystack.count {
                if haystack[index] == needle[0] && needle.indices.allSatisfy({ haystack[index + $0] == needle[$0] }) {
                    found += 1
                    index += needle.count
                } else {
                    index += 1
                }
            }
        }
        return found
    }

    /// The string after the first `"key":"`.
    static func stringValue(_ bytes: [UInt8], key: String) -> String? {
        let needle = Array("\"\(key)\":\"".utf8)
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] && Array(bytes[start..<start + needle.count]) == needle {
            let valueStart = start + needle.count
            guard let end = bytes[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return String(decoding: bytes[valueStart..<end], as: UTF8.self)
        }
        return nil
    }
}
