import Foundation
import Testing
import Tandem

/// What a field holds once saved and fetched back (issue 22: numbers read as `Int`, lists of
/// booleans, values that cannot be stored), and the words of the errors a save meets.
@Suite("Record values")
struct RecordValueTests {
    let server = TestServer.shared

    @Test func numbersReadBackAsIntInt64AndBool() async throws {
        let db = server.ada.privateDatabase
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("numbers")))
        note["stars"] = 5
        note["done"] = true
        note["flags"] = [true, false]
        note["counts"] = [3, 4]
        note["ratio"] = 0.5
        // Before a save too: the getter answers as the server's copy will.
        #expect(note["stars"] as? Int == 5)
        let fetched = try await db.record(for: try await db.save(note).recordID)
        #expect(fetched["stars"] as? Int == 5)
        #expect(fetched["stars"] as? Int64 == 5)
        #expect(fetched["done"] as? Bool == true)
        #expect(fetched["flags"] as? [Bool] == [true, false])
        #expect(fetched["flags"] as? [Int] == [1, 0])
        #expect(fetched["counts"] as? [Int] == [3, 4])
        #expect(fetched["ratio"] as? Double == 0.5)
        #expect(fetched["stars"] as? String == nil)

        // A value read back is saved back unchanged.
        var copy = Record(recordType: "Note", recordID: Record.ID(recordName: unique("copy")))
        for key in fetched.allKeys() { copy[key] = fetched[key] }
        let saved = try await db.save(copy)
        #expect(saved["stars"] as? Int == 5)
        #expect(saved["counts"] as? [Int64] == [3, 4])
        #expect(saved["ratio"] as? Double == 0.5)
    }

    struct Colour: RecordValue { var name: String }

    @Test func aValueTheSDKCannotStoreThrowsAtSaveNamingTheField() async throws {
        let db = server.ada.privateDatabase
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("colour")))
        note["title"] = "kept"
        note["colour"] = Colour(name: "teal")     // compiles (an app's own RecordValue) but is not storable
        #expect(note["colour"] == nil)
        let error = await #expect(throws: TandemError.self) { try await db.save(note) }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.contains("field 'colour'") == true)
        #expect(error?.message.contains("Colour") == true)
        // Nothing was written.
        let missing = await #expect(throws: TandemError.self) { try await db.record(for: note.recordID) }
        #expect(missing?.code == .unknownItem)
        // Replacing the value makes the record savable again.
        note["colour"] = "teal"
        #expect(try await db.save(note)["colour"] as? String == "teal")
    }

    @Test func savingARecordThatExistsSaysWhichSavePolicyToUse() async throws {
        let db = server.ada.privateDatabase
        let id = Record.ID(recordName: unique("exists"))
        var first = Record(recordType: "Note", recordID: id)
        first["title"] = "first"
        let saved = try await db.save(first)
        var second = Record(recordType: "Note", recordID: id)
        second["title"] = "second"
        let exists = await #expect(throws: TandemError.self) { try await db.save(second) }
        #expect(exists?.code == .serverRecordChanged)
        #expect(exists?.serverRecord?["title"] as? String == "first")
        let words = exists?.message ?? ""
        #expect(words.contains(".changedKeys") && words.contains(".allKeys") && words.contains("serverRecord"))
        #expect(!words.contains("use update"))
        // The advice works.
        let forced = try await db.modifyRecords(saving: [second], deleting: [], savePolicy: .changedKeys)
        #expect(try forced.saveResults[id]?.get()["title"] as? String == "second")

        // A stale copy: the same advice, in the same words.
        var stale = saved
        stale["title"] = "stale"
        let conflict = await #expect(throws: TandemError.self) { try await db.save(stale) }
        #expect(conflict?.code == .serverRecordChanged)
        #expect(conflict?.message.contains("changed on the server") == true)
        #expect(conflict?.message.contains(".allKeys") == true)
        #expect(conflict?.message.contains("recordChangeTag") == false)
    }
}
