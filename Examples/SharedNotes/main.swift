import Foundation
import Tandem

// SharedNotes: a command-line notes app on the Tandem SDK's LocalStore. Two people share a
// notebook; edits work offline and both devices converge once they reach the server.
//
//   TANDEM_TOKEN=… shared-notes add Groceries "Buy milk"
//   shared-notes list | edit NOTE TEXT (NOTE: its ID or its current text) | share NOTEBOOK EMAIL [--read-only] | accept URL | sync
//
// Environment: TANDEM_TOKEN (required), TANDEM_URL (default http://127.0.0.1:8080),
// NOTES_FILE (default ./notes.sqlite), TANDEM_CONTAINER (default iCloud.com.example.notes).

let usage = """
    usage: shared-notes add NOTEBOOK TEXT | list | edit NOTE TEXT | share NOTEBOOK EMAIL [--read-only] | accept URL | sync
    environment: TANDEM_TOKEN (required), TANDEM_URL, NOTES_FILE, TANDEM_CONTAINER
    """

func run(_ arguments: [String]) async throws {
    let environment = ProcessInfo.processInfo.environment
    guard let token = environment["TANDEM_TOKEN"], let command = arguments.first else { throw NotesError(usage) }
    let container = Container(identifier: environment["TANDEM_CONTAINER"] ?? "iCloud.com.example.notes",
                              serverURL: URL(string: environment["TANDEM_URL"] ?? "http://127.0.0.1:8080")!,
                              credentials: .userToken(token),
                              configuration: .init(retryPolicy: RetryPolicy(maximumAttempts: 1)))
    // A command-line tool exits after each command, so it syncs by hand around it.
    // Say when a sync changed what the user wrote: a merge with someone else's newer version
    // (their fields win where you did not edit), or a note deleted while you edited it offline.
    let store = try LocalStore(container: container, configuration: .init(
        fileURL: URL(fileURLWithPath: environment["NOTES_FILE"] ?? "notes.sqlite"), automaticallySync: false,
        observer: { change in
            switch change {
            case .conflict(let id):
                print("note \(id.recordName) was also changed elsewhere; merged (your edited fields kept)")
            case .deletedWhileEdited(let record):
                print("note \(record.recordID.recordName) was deleted by someone else; your edit was not kept: \(record["text"] as? String ?? "")")
            case .refused(let record, let error):
                print("note \(record.recordID.recordName): the server refused your change (\(error.code)); it shows the server's version; yours was: \(record["text"] as? String ?? "")")
            case .unsentChangesLost(let zoneID, let records, let deletions):
                print("notebook \(zoneID.zoneName) is no longer shared with you; \(records.count) unsent edit(s) and \(deletions.count) deletion(s) were not sent:")
                for record in records { print("  \(record.recordID.recordName): \(record["text"] as? String ?? "")") }
            default:
                break
            }
        }))
    let notebooks = Notebooks(store: store)
    let online = await sync(store)
    let rest = Array(arguments.dropFirst())
    switch (command, rest.count) {
    case ("add", 2):
        let note = try notebooks.add(rest[1], to: rest[0])
        print("added \(note.recordID.recordName) to \(rest[0])")
    case ("edit", 2):
        print("edited \(try notebooks.edit(rest[0], text: rest[1]))")
    case ("list", 0):
        for note in try notebooks.notes {
            let shared = try store.isShared(note.recordID) ? (try store.canUpdateRecord(note.recordID) ? " [shared]" : " [shared, read-only]") : ""
            print("\(note["notebook"] as? String ?? "?")\t\(note.recordID.recordName)\t\(note["text"] as? String ?? "")\(shared)")
        }
    case ("share", 2), ("share", 3):
        guard online else { throw NotesError("sharing needs the server") }
        print(try await notebooks.share(rest[0], with: rest[1], readOnly: rest.count == 3 && rest[2] == "--read-only"))
    case ("accept", 1):
        guard let url = URL(string: rest[0]) else { throw NotesError("not a URL: \(rest[0])") }
        let metadata = try await container.shareMetadata(for: url)
        try await store.acceptShareInvitations(from: [metadata])
        print("accepted \(metadata.share?.title ?? "the notebook") from \(metadata.ownerIdentity.nameComponents?.givenName ?? "its owner")")
    case ("sync", 0):
        break
    default:
        throw NotesError(usage)
    }
    if command != "list" && command != "accept", await sync(store) == false || store.hasUnsentChanges {
        print("offline: the change is saved on this device and will be sent at the next sync")
    }
    await store.close()   // waits for the engines, so the file is not left mid-write
}

/// Fetches and sends; false when the server cannot be reached.
func sync(_ store: LocalStore) async -> Bool {
    do { try await store.sync(); return true } catch { return false }
}

do {
    try await run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("shared-notes: \(error)\n".utf8))
    exit(1)
}
