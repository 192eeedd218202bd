import Foundation
import Testing
import TandemCore
@testable import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite
import TandemTestSupport

/// Two accounts' avatar writes that race on the same bytes (decisions P6): the file of an avatar
/// an account holds survives whichever of `release` and `restore` runs first.
@Suite struct AvatarFileKeeperTests {
    let bytes = Array("not really a png, but the keeper only counts bytes".utf8)

    /// A store where `first` holds the avatar of `bytes` and `second` has none.
    func withAccounts(_ body: (any Store, UserAccount, UserAccount, String) throws -> Void) throws {
        let directory = try ExitCleanup.temporaryDirectory("avatar-keeper")
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let checksum = try store.avatars.store(bytes)
        let (first, second) = try store.write { tx in
            let first = try tx.addUser(email: "first@example.com", givenName: nil, familyName: nil, phoneNumber: nil, at: 1)
            let second = try tx.addUser(email: "second@example.com", givenName: nil, familyName: nil, phoneNumber: nil, at: 1)
            _ = try tx.setAvatar(user: first.recordName, Avatar(checksum: checksum, contentType: "image/png"))
            return (first, second)
        }
        try body(store, first, second, checksum)
    }

    func exists(_ store: any Store, _ checksum: String) -> Bool {
        store.avatars.path(forChecksum: checksum).map { FileManager.default.fileExists(atPath: $0) } ?? false
    }

    @Test func aReleaseAfterTheOtherAccountsCommitKeepsTheFile() throws {
        try withAccounts { store, first, second, checksum in
            let unused = try store.write { tx in try tx.setAvatar(user: first.recordName, nil) }
            #expect(unused == checksum)
            _ = try store.write { tx in try tx.setAvatar(user: second.recordName, Avatar(checksum: checksum, contentType: "image/png")) }
            AvatarFileKeeper.release(checksum, store: store)
            #expect(exists(store, checksum))
        }
    }

    @Test func aReleaseBeforeTheOtherAccountsCommitIsUndoneByItsRestore() throws {
        try withAccounts { store, first, second, checksum in
            _ = try store.write { tx in try tx.setAvatar(user: first.recordName, nil) }
            AvatarFileKeeper.release(checksum, store: store)
            #expect(!exists(store, checksum), "nobody held it: erased")
            _ = try store.write { tx in try tx.setAvatar(user: second.recordName, Avatar(checksum: checksum, contentType: "image/png")) }
            try AvatarFileKeeper.restore(bytes, checksum: checksum, files: store.avatars)
            #expect(exists(store, checksum))
            let stored = try #require(store.avatars.path(forChecksum: checksum))
            #expect(FileManager.default.contents(atPath: stored).map(Array.init) == bytes)
        }
    }
}
