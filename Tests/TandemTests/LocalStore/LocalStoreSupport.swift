import Foundation
import Tandem
import TandemTestSupport

/// A local store in a fresh temporary file.
func makeStore(_ container: Container, automaticallySync: Bool = true,
               merge: @escaping @Sendable (LocalStore.Conflict) -> Record? = LocalStore.serverRecordWithLocalChanges) throws -> LocalStore {
    let url = try temporaryStoreURL()
    return try LocalStore(container: container, configuration: .init(fileURL: url, automaticallySync: automaticallySync, merge: merge))
}

/// Polls `condition` until it holds (every 50 ms, up to `seconds`).
func eventually(_ what: String, within seconds: Double = 30, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? condition()) == true { return }
        try await Task.sleep(nanoseconds: 50_000_000)
    }
    if try condition() { return }
    throw TestFailure("not reached within \(seconds) s: \(what)")
}

/// The text of every note a store sees, by record name.
func noteTexts(_ store: LocalStore, in scopes: Set<Database.Scope> = [.private, .shared]) throws -> [String: String] {
    var texts: [String: String] = [:]
    for note in try store.records(matching: Query(recordType: "Note"), in: scopes) {
        texts[note.recordID.recordName] = note["text"] as? String ?? ""
    }
    return texts
}

/// Ada shares a new notebook (one note) with Bob, who accepts: the shared zone in both stores.
func shareNotebook(ada: LocalStore, bob: LocalStore, permission: Share.ParticipantPermission = .readWrite)
    async throws -> (note: Record.ID, share: Share) {
    var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("note")))
    note["text"] = "first note"
    try ada.save([note])
    let (moved, share) = try await ada.share([note.recordID], to: nil)
    var invited = share
    invited.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: permission))
    let saved = try await ada.persistUpdatedShare(invited)
    guard let url = saved.url else { throw TestFailure("the share has no URL") }
    let metadata = try await bob.container.shareMetadata(for: url)
    try await bob.acceptShareInvitations(from: [metadata])
    return (moved[0].recordID, saved)
}

extension Record.ID {
    /// The same record as the other user's shared database names it.
    func shared(owner: String) -> Record.ID {
        Record.ID(recordName: recordName, zoneID: RecordZone.ID(zoneName: zoneID.zoneName, ownerName: owner))
    }
}
