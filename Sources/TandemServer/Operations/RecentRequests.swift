import TandemCore

/// The last requests the server answered, for the console's live request log (decisions C6):
/// a ring of at most `capacity` entries in memory, filled by `RequestLog.record` whether or not
/// lines are printed, oldest dropped first. Nothing is kept across restarts.
final class RecentRequests: Sendable {
    /// One answered request.
    struct Entry: Sendable, Hashable {
        /// Increases by one per request since start; a client asks for entries after the last it saw.
        var sequence: Int
        /// Milliseconds since 1970.
        var time: Int64
        var method: String
        /// The path without its query (queries may carry tokens).
        var path: String
        var status: Int
        var microseconds: Int
        /// The request's `uuid`, as in its error body.
        var uuid: String
    }

    /// Which entries to show: `status` is `2xx`, `4xx`, `5xx` (a class) or a code such as `404`;
    /// `pathPrefix` matches the start of the path; `requestID` is an error body's `uuid`. Empty
    /// means any.
    struct Filter: Sendable {
        var status = ""
        var pathPrefix = ""
        var requestID = ""

        func matches(_ entry: Entry) -> Bool {
            if !pathPrefix.isEmpty && !entry.path.hasPrefix(pathPrefix) { return false }
            if !requestID.isEmpty && entry.uuid != requestID { return false }
            if status.isEmpty { return true }
            if status.count == 3, status.hasSuffix("xx"), let first = status.first?.wholeNumberValue { return entry.status / 100 == first }
            return Int(status) == entry.status
        }

        /// Whether `status` is empty, a class (`4xx`) or a three-digit code.
        var isValid: Bool {
            status.isEmpty || (status.count == 3 && (Int(status) != nil || (status.hasSuffix("xx") && status.first?.isNumber == true)))
        }
    }

    let capacity: Int
    private let state: Locked<(entries: [Entry], next: Int, sequence: Int)>

    init(capacity: Int = 1000) {
        self.capacity = capacity
        state = Locked(([], 0, 0))
    }

    func append(time: Int64, method: String, path: String, status: Int, microseconds: Int, uuid: String) {
        state.withLock { ring in
            ring.sequence += 1
            let entry = Entry(sequence: ring.sequence, time: time, method: method, path: path, status: status, microseconds: microseconds, uuid: uuid)
            if ring.entries.count < capacity {
                ring.entries.append(entry)
            } else {
                ring.entries[ring.next] = entry
            }
            ring.next = (ring.next + 1) % capacity
        }
    }

    /// Matching entries newer than `after`, newest first, at most `limit`.
    func entries(after: Int = 0, matching filter: Filter = Filter(), limit: Int = 200) -> [Entry] {
        let all = state.withLock { ring -> [Entry] in
            ring.entries.count < capacity ? ring.entries : Array(ring.entries[ring.next...] + ring.entries[..<ring.next])
        }
        var result: [Entry] = []
        for entry in all.reversed() where entry.sequence > after && filter.matches(entry) {
            result.append(entry)
            if result.count == limit { break }
        }
        return result
    }
}
