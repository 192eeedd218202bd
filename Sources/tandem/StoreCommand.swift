import Foundation
import TandemStore

/// `tandem store new-generation`: after a backup of the store was put back (decisions P78).
enum StoreCommand {
    static let usage = """
          tandem store new-generation [--data DIR]   (after putting back a backup of the store: every change token issued
                          before is answered CHANGE_TOKEN_EXPIRED from now on, so clients fetch again instead of skipping
                          what the backup lacks)
        """

    /// Runs `store new-generation`; nil when the words are not it.
    static func run(_ options: Options, store: StoreLocation) throws -> Int32? {
        guard options.words.first == "store" else { return nil }
        guard options.words == ["store", "new-generation"] else {
            throw UsageError("unknown command '\(options.words.joined(separator: " "))'; the store command is: tandem store new-generation")
        }
        let generation = Int64.random(in: 1...Int64.max)
        try CommandLine.withStore(store, existing: true) { store in
            try store.write { try $0.startGeneration(generation, at: Int64(Date().timeIntervalSince1970 * 1000), forgettingEarlier: true) }
        }
        print("the store is at a new generation: change tokens issued before are expired, and clients will fetch again")
        return 0
    }
}
