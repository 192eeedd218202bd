import Foundation
import Testing
import Tandem

/// The convergence test's invariant checks (`ConvergenceChecks`) find what they must, one row per
/// kind of violation, on histories written by hand (no server): a check that cannot fail proves
/// nothing.
@Suite("Convergence checks")
struct ConvergenceChecksTests {
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        /// (sequence, record name, fields); fields nil: a deletion.
        var answers: [(Int, String, [String: String]?)]
        var writes: [AppLog.Write] = []
        var deletions: [AppLog.Deletion] = []
        /// Events by device name.
        var events: [String: [LocalStore.Change]] = [:]
        var final: [String: [String: String]]
        /// A fragment of the expected problem; nil: no problem.
        var expected: String?
    }

    static func write(_ step: Int, _ device: String, _ name: String, _ key: String, create: Bool = false, eventsBefore: Int = 0) -> AppLog.Write {
        .init(step: step, device: device, name: name, key: key, value: "\(device)-\(step)", isCreate: create, eventsBefore: eventsBefore)
    }

    static let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n", zoneID: RecordZone.ID(zoneName: "z")))

    static let cases: [Case] = [
        Case(description: "a later acknowledged edit replaces an earlier one",
             answers: [(1, "n", ["title": "d0-1"]), (2, "n", ["title": "d1-2"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "title")],
             final: ["n": ["title": "d1-2"]], expected: nil),
        Case(description: "a replaced value coming back is a revert",
             answers: [(1, "n", ["title": "d0-1"]), (2, "n", ["title": "d1-2"]), (3, "n", ["title": "d0-1"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "title")],
             final: ["n": ["title": "d0-1"]], expected: "went back to d0-1"),
        Case(description: "a revert after a merge the writer was told about is the merge's decision",
             answers: [(1, "n", ["title": "d0-1"]), (2, "n", ["title": "d1-2"]), (3, "n", ["title": "d0-1"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "title")],
             events: ["d0": [.conflict(note.recordID)]],
             final: ["n": ["title": "d0-1"]], expected: nil),
        Case(description: "an event to another device does not excuse the writer's revert",
             answers: [(1, "n", ["title": "d0-1"]), (2, "n", ["title": "d1-2"]), (3, "n", ["title": "d0-1"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "title")],
             events: ["d1": [.conflict(note.recordID)]],
             final: ["n": ["title": "d0-1"]], expected: "went back to d0-1"),
        Case(description: "an edit that never reached the server without an event is dropped",
             answers: [(1, "n", ["title": "d0-1"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "body")],
             final: ["n": ["title": "d0-1"]], expected: "d1's edit of n.body"),
        Case(description: "an edit the device was told about (refused) is not dropped",
             answers: [(1, "n", ["title": "d0-1"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "body")],
             events: ["d1": [.refused(note, TandemError(.permissionFailure, "no"))]],
             final: ["n": ["title": "d0-1"]], expected: nil),
        Case(description: "an edit replaced by the same device's later edit need not reach the server",
             answers: [(1, "n", ["title": "d0-3"])],
             writes: [write(1, "d0", "n", "title", create: true), write(3, "d0", "n", "title")],
             final: ["n": ["title": "d0-3"]], expected: nil),
        Case(description: "an event before the write does not excuse it",
             answers: [(1, "n", ["title": "d0-1"])],
             writes: [write(1, "d0", "n", "title", create: true), write(2, "d1", "n", "body", eventsBefore: 1)],
             events: ["d1": [.conflict(note.recordID)]],
             final: ["n": ["title": "d0-1"]], expected: "d1's edit of n.body"),
        Case(description: "a create that never reached the server without an event is dropped",
             answers: [], writes: [write(1, "d0", "n", "title", create: true)],
             final: [:], expected: "d0's create of n.title"),
        Case(description: "a create the device deleted itself need not reach the server",
             answers: [], writes: [write(1, "d0", "n", "title", create: true)],
             deletions: [.init(step: 2, device: "d0", name: "n")],
             final: [:], expected: nil),
        Case(description: "a saved record nobody deleted missing at the end is lost",
             answers: [(1, "n", ["title": "d0-1"])], writes: [write(1, "d0", "n", "title", create: true)],
             final: [:], expected: "missing at the end"),
        Case(description: "a record the server deleted that is there at the end came back",
             answers: [(1, "n", ["title": "d0-1"]), (2, "n", nil)], writes: [write(1, "d0", "n", "title", create: true)],
             final: ["n": ["title": "d0-1"]], expected: "came back"),
        Case(description: "a record deleted on the server and absent at the end is fine",
             answers: [(1, "n", ["title": "d0-1"]), (2, "n", nil)], writes: [write(1, "d0", "n", "title", create: true)],
             final: [:], expected: nil),
    ]

    @Test(arguments: cases)
    func findsWhatItMust(_ row: Case) {
        let history = ServerHistory()
        history.follow(zoneName: "z")
        for (sequence, name, fields) in row.answers {
            let entry: [String: Any] = fields.map { fields in
                ["recordName": name, "recordType": "Note", "recordChangeTag": "\(String(sequence, radix: 36))-1",
                 "fields": fields.mapValues { ["value": $0, "type": "STRING"] }, "created": ["timestamp": 1000]]
            } ?? ["recordName": name, "deleted": true]
            let body = try! JSONSerialization.data(withJSONObject: ["records": [entry]])
            let request = Array("POST /records/modify HTTP/1.1\r\ncontent-length: 0\r\n\r\n{\"zoneID\": {\"zoneName\": \"z\"}}".utf8)
            history.answer("POST /records/modify", request, Array(body))
        }
        let checks = ConvergenceChecks(history: history, app: AppLog(writes: row.writes, deletions: row.deletions),
                                       events: row.events, final: row.final)
        let problems = checks.problems()
        if let expected = row.expected {
            #expect(problems.contains { $0.contains(expected) }, "\(row): \(problems)")
        } else {
            #expect(problems.isEmpty, "\(row): \(problems)")
        }
    }
}
