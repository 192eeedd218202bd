import Testing
import TandemCore
import TandemStore

/// Allowed sharing options through `any Store` (decisions R15–R17): the container's policy and
/// a share's own, `standard` until set, stored as set, gone with the share.
@Suite struct SharingOptionsConformanceTests {
    @Test(arguments: StoreBackend.all(for: .shares))
    func containerAndShareOptionsAreStoredAsSetAndGoWithTheShare(backend: StoreBackend) throws {
        try ShareConformanceTests.withShare(backend) { store, people in
            let narrow = AllowedSharingOptions(permission: .readOnly, access: .specifiedRecipientsOnly)
            let link = AllowedSharingOptions(permission: .readWrite, access: .anyoneWithLink)
            try store.read { reader throws -> Void in
                #expect(try reader.allowedSharingOptions(container: Fixture.container) == .standard)
                #expect(try reader.allowedSharingOptions(container: "iCloud.nowhere") == nil)
                #expect(try reader.allowedSharingOptions(share: people.share) == .standard)
            }
            try store.write { tx throws -> Void in
                #expect(try tx.setAllowedSharingOptions(narrow, container: Fixture.container))
                #expect(try !tx.setAllowedSharingOptions(narrow, container: "iCloud.nowhere"))
                try tx.setAllowedSharingOptions(link, share: people.share)
            }
            try store.read { reader throws -> Void in
                #expect(try reader.allowedSharingOptions(container: Fixture.container) == narrow)
                #expect(try reader.allowedSharingOptions(share: people.share) == link)
                // putShare (a later save of the share's other state) keeps them.
            }
            try store.write { tx throws -> Void in
                var share = people.share
                share.publicPermission = .readWrite
                _ = try tx.putShare(share)
                #expect(try tx.allowedSharingOptions(share: people.share) == link)
                try tx.deleteShare(people.share)
                // The same root shared again starts from `standard`.
                let again = try tx.putShare(StoredShare(key: 0, zone: people.fixture.zone, recordName: "share-root", rootRecordName: "root",
                                                        shortGUID: "guid-root", publicPermission: .none, allowsAccessRequests: false,
                                                        createdAt: 3_000))
                #expect(try tx.allowedSharingOptions(share: again) == .standard)
            }
        }
    }
}
