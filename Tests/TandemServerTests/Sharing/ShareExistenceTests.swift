import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// A participant of one share learns nothing, through writes, about the records of another
/// share in the same zone: every write to one is `NOT_FOUND` with the reason a record that does
/// not exist gets (DESIGN.md §6; lookups are covered by AuthorizationMatrixTests).
@Suite struct ShareExistenceTests {
    static let operations = ["update", "forceUpdate", "replace", "forceReplace", "delete", "forceDelete"]

    @Test("writing a record of another share in the zone is NOT_FOUND, exactly as a missing record", arguments: operations)
    func writesToAnotherSharesRecordAreNotFound(_ operation: String) throws {
        let server = try Shared.server
        let ann = try server.person("ann"), bob = try server.person("bob")
        // Share A (note, child) with Ann, who may write; share B (other, otherChild) with Bob.
        let note = try server.shareNote(owner: try server.person("owner"), participants: [Invite.email(ann, "READ_WRITE")])
        try server.accept(note, as: ann)
        let other = try server.ownerModify(note, [
            Body.operation("create", name: "other", fields: [:]),
            Body.operation("create", name: "otherChild", fields: [:], extra: ["parent": ["recordName": "other"]]),
            Body.operation("create", name: "shareB", recordType: "cloudkit.share",
                           extra: ["forRecord": ["recordName": "other"], "participants": [Invite.email(bob, "READ_WRITE")]]),
        ])
        #expect(other.json.records.allSatisfy { $0.serverErrorCode == nil }, "\(other.text)")
        let tag = other.json.record(1)["recordChangeTag"]?.stringValue
        func attempt(_ name: String) throws -> JSONValue {
            try server.sharedModify(note, [Body.operation(operation, name: name, recordType: "Note", tag: tag,
                                                          fields: ["title": Body.field("mine")])], as: ann).json.record(0)
        }
        // A force update or replace of a missing name would create it, so only the others compare with one.
        let comparesWithMissing = !operation.hasPrefix("forceU") && !operation.hasPrefix("forceR")
        for name in ["otherChild", "other", "shareB"] {
            let hidden = try attempt(name)
            #expect(hidden.serverErrorCode == "NOT_FOUND", "\(operation) \(name): \(hidden)")
            #expect(hidden["reason"]?.stringValue == "record '\(name)' does not exist", "\(operation) \(name): \(hidden)")
            if comparesWithMissing {
                let missing = try attempt("missing-\(name)")
                #expect(missing.serverErrorCode == "NOT_FOUND")
                #expect(hidden["reason"]?.stringValue?.replacingOccurrences(of: name, with: "X")
                        == missing["reason"]?.stringValue?.replacingOccurrences(of: "missing-\(name)", with: "X"), "\(operation) \(name)")
            }
        }
        // Nothing changed for the owner.
        let lookup = try server.post("records/lookup", Body.lookup(["otherChild"], zone: note.zone), as: note.owner, database: "private")
        #expect(lookup.json.record(0)["recordChangeTag"]?.stringValue == tag)
    }
}
