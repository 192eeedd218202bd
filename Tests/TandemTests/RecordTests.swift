import Foundation
import Testing
import Tandem
import TandemTestSupport

@Suite("Records")
struct RecordTests {
    let server = TestServer.shared

    @Test func savedRecordFetchesBackWithTypedFieldsAndIsDeleted() async throws {
        let db = server.ada.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: unique("notes")))
        let target = try await db.save(Record(recordType: "Tag", recordID: Record.ID(recordName: unique("tag"), zoneID: zone.zoneID)))
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("note"), zoneID: zone.zoneID))
        let when = Date(timeIntervalSince1970: 1_700_000_000.123)
        note["title"] = "Lisbon in May"
        note["stars"] = 5
        note["ratio"] = 0.25
        note["when"] = when
        note["tags"] = ["trip", "spring"]
        note["blob"] = Data([1, 2, 3])
        note["where"] = Location(latitude: 38.72, longitude: -9.14)
        note["tag"] = Reference(record: target)
        note.setParent(target.recordID)

        let saved = try await db.save(note)
        #expect(saved.recordChangeTag != nil)
        #expect(saved.changedKeys().isEmpty)
        let fetched = try await db.record(for: note.recordID)
        #expect(fetched.recordID == note.recordID)
        #expect(fetched["title"] as? String == "Lisbon in May")
        #expect(fetched["stars"] as? Int64 == 5)
        #expect(fetched["ratio"] as? Double == 0.25)
        #expect(fetched["when"] as? Date == when)
        #expect(fetched["tags"] as? [String] == ["trip", "spring"])
        #expect(fetched["blob"] as? Data == Data([1, 2, 3]))
        #expect((fetched["where"] as? Location)?.latitude == 38.72)
        #expect((fetched["tag"] as? Reference)?.recordID == target.recordID)
        #expect(fetched.parent?.recordID == target.recordID)
        #expect(fetched.recordChangeTag == saved.recordChangeTag)
        #expect(fetched.creationDate != nil)

        var edited = fetched
        edited["title"] = nil
        edited["stars"] = 4
        #expect(edited.changedKeys() == ["stars", "title"])
        let updated = try await db.save(edited)
        #expect(updated["title"] == nil)
        #expect(updated["stars"] as? Int64 == 4)
        #expect(updated["ratio"] as? Double == 0.25)
        #expect(updated.recordChangeTag != saved.recordChangeTag)

        try await db.deleteRecord(withID: note.recordID)
        let error = await #expect(throws: TandemError.self) { try await db.record(for: note.recordID) }
        #expect(error?.code == .unknownItem)
    }

    @Test func staleChangeTagReturnsServerRecordChangedWithServerRecord() async throws {
        let db = server.ada.privateDatabase
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("conflict")))
        note["title"] = "first"
        note["body"] = "kept"
        let saved = try await db.save(note)

        var mine = saved
        mine["title"] = "mine"
        var theirs = saved
        theirs["title"] = "theirs"
        let theirsSaved = try await db.save(theirs)

        let error = await #expect(throws: TandemError.self) { try await db.save(mine) }
        #expect(error?.code == .serverRecordChanged)
        let serverRecord = try #require(error?.serverRecord)
        #expect(serverRecord["title"] as? String == "theirs")
        #expect(serverRecord.recordChangeTag == theirsSaved.recordChangeTag)

        // Merge onto the server record and save again, as CloudKit apps do.
        var merged = serverRecord
        merged["title"] = "theirs + mine"
        #expect(try await db.save(merged)["title"] as? String == "theirs + mine")

        // .changedKeys writes over whatever the server holds, keeping other fields.
        var forced = saved
        forced["title"] = "forced"
        let result = try await db.modifyRecords(saving: [forced], deleting: [], savePolicy: .changedKeys)
        let afterChangedKeys = try result.saveResults[forced.recordID]!.get()
        #expect(afterChangedKeys["title"] as? String == "forced")
        #expect(afterChangedKeys["body"] as? String == "kept")

        // .allKeys replaces the record: fields not in it are gone.
        var replacement = Record(recordType: "Note", recordID: note.recordID)
        replacement["title"] = "replaced"
        let replaced = try await db.modifyRecords(saving: [replacement], deleting: [], savePolicy: .allKeys)
        let afterAllKeys = try replaced.saveResults[note.recordID]!.get()
        #expect(afterAllKeys["title"] as? String == "replaced")
        #expect(afterAllKeys["body"] == nil)
    }

    @Test func newRecordWithExistingNameIsServerRecordChanged() async throws {
        let db = server.ada.privateDatabase
        let id = Record.ID(recordName: unique("twice"))
        try await db.save(Record(recordType: "Note", recordID: id))
        let error = await #expect(throws: TandemError.self) { try await db.save(Record(recordType: "Note", recordID: id)) }
        #expect(error?.code == .serverRecordChanged)
        #expect(error?.serverRecord?.recordID == id)
    }

    @Test func atomicBatchFailsWholeWithPartialFailureKeyedByRecordID() async throws {
        let db = server.ada.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: unique("atomic")))
        let existing = Record.ID(recordName: "existing", zoneID: zone.zoneID)
        try await db.save(Record(recordType: "Note", recordID: existing))

        let fresh = Record(recordType: "Note", recordID: Record.ID(recordName: "fresh", zoneID: zone.zoneID))
        let duplicate = Record(recordType: "Note", recordID: existing)
        let result = try await db.modifyRecords(saving: [fresh, duplicate], deleting: [], atomically: true)
        let failure = try #require(result.partialFailure)
        #expect(failure.code == .partialFailure)
        #expect(failure.partialErrorsByItemID[.record(existing)]?.code == .serverRecordChanged)
        #expect(failure.partialErrorsByItemID[.record(fresh.recordID)]?.code == .batchRequestFailed)
        let error = await #expect(throws: TandemError.self) { try await db.record(for: fresh.recordID) }
        #expect(error?.code == .unknownItem)

        // Not atomic: the good one is saved, the bad one reported.
        let partial = try await db.modifyRecords(saving: [fresh, duplicate], deleting: [], atomically: false)
        #expect(try partial.saveResults[fresh.recordID]?.get().recordID == fresh.recordID)
        #expect(partial.partialFailure?.partialErrorsByItemID.keys.map { $0 } == [.record(existing)])
    }

    @Test func assetUploadsFromFileAndDownloadsToFile() async throws {
        let container = server.ada
        let db = container.privateDatabase
        let source = URL(fileURLWithPath: NSTemporaryDirectory() + unique("asset-in"))
        ExitCleanup.removeAtExit(source.path)
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        try bytes.write(to: source)
        var photo = Record(recordType: "Photo", recordID: Record.ID(recordName: unique("photo")))
        photo["image"] = Asset(fileURL: source)
        let saved = try await db.save(photo)
        let asset = try #require(saved["image"] as? Asset)
        #expect(asset.size == 5000)
        #expect(asset.downloadURL != nil)
        let destination = URL(fileURLWithPath: NSTemporaryDirectory() + unique("asset-out"))
        ExitCleanup.removeAtExit(destination.path)
        try await container.download(asset, to: destination)
        #expect(try Data(contentsOf: destination) == bytes)
    }
}
