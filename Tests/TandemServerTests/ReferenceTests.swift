import Foundation
import Testing
import TandemCore

/// REFERENCE actions: NONE leaves referrers alone, DELETE_SELF deletes them with the target,
/// VALIDATE needs the target to exist and keeps it from being deleted.
@Suite struct ReferenceTests {
    func reference(_ name: String, _ action: String) -> JSONValue {
        Body.field(["recordName": .string(name), "action": .string(action)], "REFERENCE")
    }

    @Test func noneLeavesReferrerWhenTargetIsDeleted() throws {
        let server = try Shared.server
        let target = unique("t"), source = unique("s")
        try server.create(target, fields: [:])
        try server.create(source, fields: ["ref": reference(target, "NONE")])
        let deleted = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: target)]))
        #expect(deleted.json.record(0)["deleted"]?.boolValue == true)
        let lookup = try server.post("records/lookup", Body.lookup([source]))
        #expect(lookup.json.record(0)["fields"]?["ref"]?["value"]?["recordName"]?.stringValue == target)
        #expect(lookup.json.record(0)["fields"]?["ref"]?["value"]?["action"]?.stringValue == "NONE")
    }

    @Test func deleteSelfDeletesReferrersTransitively() throws {
        let server = try Shared.server
        let zone = try server.makeZone("cascade")
        let root = unique("root"), child = unique("child"), grandchild = unique("grand"), bystander = unique("by")
        try server.create(root, fields: [:], zone: zone)
        try server.create(child, fields: ["up": reference(root, "DELETE_SELF")], zone: zone)
        try server.create(grandchild, fields: ["up": Body.field([["recordName": .string(child), "action": "DELETE_SELF"]], "REFERENCE_LIST")], zone: zone)
        try server.create(bystander, fields: ["up": reference(root, "NONE")], zone: zone)
        _ = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: root)], zone: zone))
        let lookup = try server.post("records/lookup", Body.lookup([root, child, grandchild, bystander], zone: zone))
        #expect(lookup.json.records.map(\.serverErrorCode) == ["NOT_FOUND", "NOT_FOUND", "NOT_FOUND", nil])
    }

    @Test func validateNeedsAnExistingTarget() throws {
        let server = try Shared.server
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("v"), fields: ["ref": reference(unique("ghost"), "VALIDATE")])]))
        #expect(response.json.record(0).serverErrorCode == "VALIDATING_REFERENCE_ERROR")
    }

    @Test func validateTargetCannotBeDeletedWhileReferenced() throws {
        let server = try Shared.server
        let target = unique("t"), source = unique("s")
        try server.create(target, fields: [:])
        try server.create(source, fields: ["ref": reference(target, "VALIDATE")])
        let refused = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: target)]))
        #expect(refused.json.record(0).serverErrorCode == "VALIDATING_REFERENCE_ERROR")
        // Once the referrer is gone, the target can go.
        _ = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: source)]))
        let allowed = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: target)]))
        #expect(allowed.json.record(0)["deleted"]?.boolValue == true)
    }

    @Test func validateTargetCreatedEarlierInTheSameBatchCounts() throws {
        let server = try Shared.server
        let target = unique("t")
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: target, fields: [:]),
            Body.operation("create", name: unique("s"), fields: ["ref": reference(target, "VALIDATE")]),
        ]))
        #expect(response.json.records.map(\.serverErrorCode) == [nil, nil])
    }

    @Test func referencesCannotLeaveTheirZone() throws {
        let server = try Shared.server
        let zoneA = try server.makeZone("ra"), zoneB = try server.makeZone("rb")
        let target = unique("t")
        try server.create(target, fields: [:], zone: zoneA)
        let ref = Body.field(["recordName": .string(target), "zoneID": ["zoneName": .string(zoneA)], "action": "VALIDATE"], "REFERENCE")
        let refused = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("s"), fields: ["ref": ref])], zone: zoneB))
        #expect(refused.json.record(0).serverErrorCode == "BAD_REQUEST")
        #expect(refused.json.record(0)["reason"]?.stringValue?.contains("same zone") == true)
        let sameZone = Body.field(["recordName": .string(target), "zoneID": ["zoneName": .string(zoneA)], "action": "VALIDATE"], "REFERENCE")
        let allowed = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("s"), fields: ["ref": sameZone])], zone: zoneA))
        #expect(allowed.json.record(0).serverErrorCode == nil)
    }

    @Test func childKeepsADeletedParentAndCanStillBeUpdated() throws {
        let server = try Shared.server
        let parent = unique("p"), child = unique("c")
        try server.create(parent, fields: [:])
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: child, fields: ["v": Body.field(1)], extra: ["parent": ["recordName": .string(parent)]])]))
        _ = try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: parent)]))
        let updated = try server.post("records/modify", Body.modify([Body.operation("forceUpdate", name: child, fields: ["v": Body.field(2)])]))
        #expect(updated.json.record(0).serverErrorCode == nil, "\(updated.text)")
        #expect(updated.json.record(0)["fields"]?["v"]?["value"]?.int64Value == 2)
    }

    @Test func parentMustExistInTheZone() throws {
        let server = try Shared.server
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: unique("c"), fields: [:], extra: ["parent": ["recordName": .string(unique("nobody"))]]),
        ]))
        #expect(response.json.record(0).serverErrorCode == "VALIDATING_REFERENCE_ERROR")
        let parent = unique("p")
        try server.create(parent, fields: [:])
        let ok = try server.post("records/modify", Body.modify([
            Body.operation("create", name: unique("c"), fields: [:], extra: ["parent": ["recordName": .string(parent)]]),
        ]))
        #expect(ok.json.record(0)["parent"]?["recordName"]?.stringValue == parent)
    }

    @Test func parentAndRecordZoneMustBeTheRequestsZone() throws {
        let server = try Shared.server
        let zoneA = try server.makeZone("pa"), zoneB = try server.makeZone("pb")
        try server.create("doc", fields: [:], zone: zoneB)
        let parent = try server.post("records/modify", Body.modify([Body.operation("create", name: unique("c"), fields: [:],
            extra: ["parent": ["recordName": "doc", "zoneID": ["zoneName": .string(zoneB)]]])], zone: zoneA))
        #expect(parent.json.record(0).serverErrorCode == "BAD_REQUEST")
        let name = unique("elsewhere")
        let record = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: [:],
            extra: ["zoneID": ["zoneName": .string(zoneB)]])], zone: zoneA))
        #expect(record.json.record(0).serverErrorCode == "BAD_REQUEST")
        let lookup = try server.post("records/lookup", Body.lookup([name], zone: zoneB))
        #expect(lookup.json.record(0).serverErrorCode == "NOT_FOUND")
    }
}
