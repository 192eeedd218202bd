import Foundation
import Tandem

/// The notes app's model on top of `LocalStore`: a note is a `Note` record with `notebook` and
/// `text` fields; a notebook's notes live in one zone (the default zone until it is shared,
/// then the share's zone, in the owner's private database and the participants' shared ones).
struct Notebooks {
    let store: LocalStore

    /// The app's notes: `Note` records with a `notebook` (another app's `Note`s in the same
    /// container, like the README's curl walk-through's, are not ours to list).
    var notes: [Record] {
        get throws {
            try store.records(matching: Query(recordType: "Note", sort: [.ascending("notebook"), .ascending("created")]))
                .filter { $0["notebook"] is String }
        }
    }

    /// Adds a note to a notebook: beside its existing notes (in their zone), or in the default zone.
    func add(_ text: String, to notebook: String) throws -> Record {
        let sibling = try store.records(matching: Query(recordType: "Note", filters: [.equals("notebook", notebook)]), limit: 1).first
        if let sibling, try !store.canUpdateRecord(sibling.recordID) { throw NotesError("notebook \(notebook) is read-only for you") }
        let zoneID = sibling?.recordID.zoneID ?? .default
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: "note-" + UUID().uuidString.prefix(6).lowercased(), zoneID: zoneID))
        note["notebook"] = notebook
        note["text"] = text
        note["created"] = Date()
        try store.save([note])
        return note
    }

    /// Changes a note's text; `name` is the note's record name or its current text (when only
    /// one note has that text), so a walk-through need not know the random record names.
    /// Returns the note's record name.
    @discardableResult
    func edit(_ name: String, text: String) throws -> String {
        let all = try notes
        let byText = all.filter { $0["text"] as? String == name }
        guard byText.count <= 1 || all.contains(where: { $0.recordID.recordName == name }) else {
            throw NotesError("\(byText.count) notes read \"\(name)\": name one by its ID (list shows them)")
        }
        guard var note = all.first(where: { $0.recordID.recordName == name }) ?? byText.first else { throw NotesError("no note \(name)") }
        let id = note.recordID.recordName
        guard try store.canUpdateRecord(note.recordID) else { throw NotesError("\(id) is read-only for you") }
        note["text"] = text
        try store.save([note])
        return id
    }

    /// Shares a notebook with someone (a new share the first time; the same share afterwards).
    func share(_ notebook: String, with email: String, readOnly: Bool) async throws -> URL {
        let ids = try notes.filter { $0["notebook"] as? String == notebook }.map(\.recordID)
        guard let first = ids.first else { throw NotesError("no notebook \(notebook)") }
        var share: Share
        if let existing = try store.fetchShares(matching: [first])[first] {
            share = existing
        } else {
            share = try await store.share(ids, to: nil).share
        }
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: email), permission: readOnly ? .readOnly : .readWrite))
        share.title = notebook
        guard let url = try await store.persistUpdatedShare(share).url else { throw NotesError("the share has no URL") }
        return url
    }
}

struct NotesError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
