import Foundation
import Testing
import TandemCore

/// `atomic` batches: all-or-nothing in custom zones, collateral failures as ATOMIC_ERROR;
/// non-atomic batches commit what succeeds (CloudKit Web Services: records/modify, `atomic`).
@Suite struct AtomicBatchTests {
    @Test func atomicBatchWithOneFailureWritesNothing() throws {
        let server = try Shared.server
        let zone = try server.makeZone("atomic")
        let existing = unique("existing")
        try server.create(existing, fields: ["v": Body.field(1)], zone: zone)
        let fresh = [unique("a"), unique("b")]
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: fresh[0], fields: ["v": Body.field(1)]),
            Body.operation("create", name: existing, fields: ["v": Body.field(2)]),
            Body.operation("create", name: fresh[1], fields: ["v": Body.field(3)]),
        ], zone: zone, atomic: true))
        #expect(response.status == 200)
        #expect(response.json.records.map(\.serverErrorCode) == ["ATOMIC_ERROR", "EXISTS", "ATOMIC_ERROR"])
        #expect(response.json.record(0)["recordName"]?.stringValue == fresh[0])
        let lookup = try server.post("records/lookup", Body.lookup(fresh + [existing], zone: zone))
        #expect(lookup.json.records.map(\.serverErrorCode) == ["NOT_FOUND", "NOT_FOUND", nil])
        #expect(lookup.json.record(2)["fields"]?["v"]?["value"]?.int64Value == 1)
    }

    @Test func atomicIsTheDefaultInCustomZones() throws {
        let server = try Shared.server
        let zone = try server.makeZone("atomic-default")
        let name = unique("a")
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: name, fields: [:]),
            Body.operation("update", name: unique("missing"), tag: "1", fields: [:]),
        ], zone: zone))
        #expect(response.json.records.map(\.serverErrorCode) == ["ATOMIC_ERROR", "NOT_FOUND"])
    }

    @Test func nonAtomicBatchCommitsTheRest() throws {
        let server = try Shared.server
        let zone = try server.makeZone("nonatomic")
        let names = [unique("a"), unique("b")]
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: names[0], fields: ["v": Body.field(1)]),
            Body.operation("update", name: unique("missing"), tag: "1", fields: [:]),
            Body.operation("create", name: names[1], fields: ["v": Body.field(2)]),
        ], zone: zone, atomic: false))
        #expect(response.status == 200)
        #expect(response.json.records.map(\.serverErrorCode) == [nil, "NOT_FOUND", nil])
        let lookup = try server.post("records/lookup", Body.lookup(names, zone: zone))
        #expect(lookup.json.records.compactMap { $0["fields"]?["v"]?["value"]?.int64Value } == [1, 2])
    }

    @Test func defaultZoneIgnoresAtomicAsCloudKitDoes() throws {
        let server = try Shared.server
        let name = unique("default-zone")
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: name, fields: [:]),
            Body.operation("update", name: unique("missing"), tag: "1", fields: [:]),
        ], atomic: true))
        #expect(response.json.records.map(\.serverErrorCode) == [nil, "NOT_FOUND"])
    }

    @Test func failedItemInNonAtomicBatchLeavesNoPartialCascade() throws {
        let server = try Shared.server
        let zone = try server.makeZone("partial")
        let target = unique("target"), child = unique("child"), guardian = unique("guardian")
        try server.create(target, fields: [:], zone: zone)
        try server.create(child, fields: ["ref": Body.field(["recordName": .string(target), "action": "DELETE_SELF"])], zone: zone)
        try server.create(guardian, fields: ["ref": Body.field(["recordName": .string(child), "action": "VALIDATE"])], zone: zone)
        // Deleting target would cascade to child, which guardian VALIDATEs: the whole item fails
        // and the cascade must not have happened.
        let response = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: target)], zone: zone, atomic: false))
        #expect(response.json.record(0).serverErrorCode == "VALIDATING_REFERENCE_ERROR")
        let lookup = try server.post("records/lookup", Body.lookup([target, child, guardian], zone: zone))
        #expect(lookup.json.records.map(\.serverErrorCode) == [nil, nil, nil])
    }
}
