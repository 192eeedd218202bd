import Foundation
import Tandem

/// What the server did to the run's notes, as seen from outside the SDK: every answer the
/// server gave to a device's `records/modify` (the fault proxies pass it to `answer(_:_:)`, also
/// when they drop it, and for duplicated requests), and the zone's change feed read straight from
/// the server after every step and at the end. Change tags are `<zone sequence>-<zone>` (base
/// 36), so the versions of a record order exactly.
final class ServerHistory: @unchecked Sendable {
    struct Version {
        var fields: [String: String]
        /// Creation time in milliseconds: a second value means the record was created again.
        var created: Int64?
    }

    private let lock = NSLock()
    private var versions: [String: [Int64: Version]] = [:]
    private var deleted = Set<String>()
    private var zoneName: String?

    /// The run's zone: answers about other zones (the default zone a shared note left) are not
    /// its history. Nothing is recorded before it is set.
    func follow(zoneName: String) { lock.withLock { self.zoneName = zoneName } }

    /// A `records/modify` exchange (the request's bytes, the answer's JSON body): saved records of
    /// the run's zone become versions, deletions are noted.
    func answer(_ line: String, _ request: [UInt8], _ body: [UInt8]) {
        if ProcessInfo.processInfo.environment["TANDEM_HISTORY_DEBUG"] != nil { print("answer \(line): \(String(decoding: body.prefix(300), as: UTF8.self))") }
        let separator = Array("\r\n\r\n".utf8)
        guard let start = request.firstRange(of: separator)?.upperBound,
              let sent = try? JSONSerialization.jsonObject(with: Data(request[start...])) as? [String: Any],
              let zone = (sent["zoneID"] as? [String: Any])?["zoneName"] as? String,
              let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let records = object["records"] as? [[String: Any]] else { return }
        lock.withLock {
            guard zone == zoneName else { return }
            for record in records {
                guard let name = record["recordName"] as? String, record["serverErrorCode"] == nil else { continue }
                if record["deleted"] as? Bool == true { deleted.insert(name); continue }
                guard record["recordType"] as? String == "Note", let tag = record["recordChangeTag"] as? String,
                      let sequence = Self.sequence(tag) else { continue }
                var fields: [String: String] = [:]
                for (key, value) in record["fields"] as? [String: Any] ?? [:] {
                    if let text = (value as? [String: Any])?["value"] as? String { fields[key] = text }
                }
                let created = ((record["created"] as? [String: Any])?["timestamp"] as? NSNumber)?.int64Value
                versions[name, default: [:]][sequence] = Version(fields: fields, created: created)
            }
        }
    }

    /// Records and tombstones read from the zone's feed.
    func fetched(_ records: [Record], deletions: [String]) {
        lock.withLock {
            for record in records where record.recordType == "Note" {
                guard let tag = record.recordChangeTag, let sequence = Self.sequence(tag) else { continue }
                let created = record.creationDate.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
                versions[record.recordID.recordName, default: [:]][sequence] = Version(fields: LocalStoreRun.fields(record), created: created)
            }
            deleted.formUnion(deletions)
        }
    }

    /// The versions of a record the server made, oldest first.
    func history(of name: String) -> [Version] {
        lock.withLock { (versions[name] ?? [:]).sorted { $0.key < $1.key }.map(\.value) }
    }

    /// Names of records the server deleted at some point (answers and feed tombstones).
    var deletedNames: Set<String> { lock.withLock { deleted } }

    /// Whether any version of the record had `value` for `key`.
    func held(_ name: String, _ key: String, _ value: String) -> Bool {
        lock.withLock { versions[name]?.values.contains { $0.fields[key] == value } ?? false }
    }

    /// Versions known, over all records.
    var versionCount: Int { lock.withLock { versions.values.map(\.count).reduce(0, +) } }

    /// Whether the server ever saved the record.
    func saved(_ name: String) -> Bool { lock.withLock { !(versions[name]?.isEmpty ?? true) } }

    static func sequence(_ tag: String) -> Int64? { tag.split(separator: "-").first.flatMap { Int64($0, radix: 36) } }
}

/// The run's own record of what the app did: every value written (unique in the run: the device
/// and step), and local deletions.
struct AppLog {
    struct Write {
        var step: Int; var device: String; var name: String; var key: String; var value: String; var isCreate: Bool
        /// How many events the device had had when the app wrote: only later ones can be about this write.
        var eventsBefore = 0
    }
    struct Deletion { var step: Int; var device: String; var name: String }
    var writes: [Write] = []
    var deletions: [Deletion] = []

    /// The device that wrote a value ("d1-17" → "d1").
    static func writer(of value: String) -> String? { value.split(separator: "-").first.map(String.init) }
}

/// The invariants of K32 over one run, from the server's history, the app's log and each
/// device's events. An event naming a record excuses only the writes of the device that got it.
struct ConvergenceChecks {
    let history: ServerHistory
    let app: AppLog
    /// Each device's events, by device name.
    let events: [String: [LocalStore.Change]]
    /// The server's notes at quiescence, by record name.
    let final: [String: [String: String]]
    /// The run's zone (events about other zones are not about the run's records).
    var zoneName = "z"

    /// Whether `device` was told something about the record (K32 (b)'s events) after its
    /// `eventsBefore`-th event.
    func named(_ device: String, _ name: String, after eventsBefore: Int = 0) -> Bool {
        (events[device] ?? []).dropFirst(eventsBefore).contains { change in
            switch change {
            case .conflict(let id): id.recordName == name && id.zoneID.zoneName == zoneName
            case .refused(let record, _), .deletedWhileEdited(let record):
                record.recordID.recordName == name && record.recordID.zoneID.zoneName == zoneName
            case .unsentChangesLost(let zoneID, let records, let deletions):
                zoneID.zoneName == zoneName && (records.contains { $0.recordID.recordName == name } || deletions.contains { $0.recordName == name })
            default: false
            }
        }
    }

    /// Names the server deleted: answers, feed tombstones, and deletions a device was told were sent.
    var deletedOnServer: Set<String> {
        var names = history.deletedNames
        for changes in events.values {
            for case .sent(_, let deleted) in changes { names.formUnion(deleted.filter { $0.zoneID.zoneName == zoneName }.map(\.recordName)) }
        }
        return names
    }

    func problems() -> [String] {
        var problems: [String] = []
        let names = Set(app.writes.map(\.name)).union(final.keys)
        let deleted = deletedOnServer
        for name in names.sorted() {
            let versions = history.history(of: name)
            // (a) An acknowledged value replaced by another never comes back, unless the device
            // that wrote it was told (a merge it decided, K33).
            let firstCreated = versions.first?.created
            for key in ["title", "body", "color"] {
                var current: String?
                var replaced = Set<String>()
                for version in versions where version.created == firstCreated {
                    let value = version.fields[key]
                    guard value != current else { continue }
                    if let current { replaced.insert(current) }
                    let write = app.writes.first { $0.value == value && $0.name == name && $0.key == key }
                    if let value, replaced.contains(value), !(write.map { named($0.device, name, after: $0.eventsBefore) } ?? false) {
                        problems.append("\(name).\(key) went back to \(value) after it was replaced (a): \(versions.map { $0.fields[key] ?? "-" })")
                    }
                    if value == nil, current != nil {
                        problems.append("\(name).\(key) lost its value \(current!) (a): \(versions.map { $0.fields[key] ?? "-" })")
                    }
                    current = value
                }
            }
            // (d) A record the server deleted stays deleted (names are never reused here, and a
            // re-save after a local delete keeps its change tag, so the server would refuse it).
            if deleted.contains(name) {
                if final[name] != nil { problems.append("\(name) was deleted on the server and came back (d): \(final[name]!)") }
                else if Set(versions.compactMap(\.created)).count > 1 { problems.append("\(name) was deleted on the server and created again meanwhile (d)") }
            }
            // (b) A record the server saved and nobody deleted is there at the end.
            if history.saved(name), !deleted.contains(name), final[name] == nil {
                problems.append("\(name) was saved on the server, never deleted, and is missing at the end (b)")
            }
        }
        // (b) Every write reached the server, or was replaced by the same device's later write of
        // the key, or its record was deleted by that device, or that device was told.
        for write in app.writes where !history.held(write.name, write.key, write.value) {
            let overwritten = app.writes.contains { $0.device == write.device && $0.name == write.name && $0.key == write.key && $0.step > write.step }
            let deletedHere = app.deletions.contains { $0.device == write.device && $0.name == write.name && $0.step >= write.step }
            if overwritten || deletedHere || named(write.device, write.name, after: write.eventsBefore) { continue }
            problems.append("\(write.device)'s \(write.isCreate ? "create of" : "edit of") \(write.name).\(write.key) = \(write.value) (step \(write.step)) never reached the server, and no event said so (b)")
        }
        return problems
    }
}
