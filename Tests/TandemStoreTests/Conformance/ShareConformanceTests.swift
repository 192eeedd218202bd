import Testing
import TandemCore
import TandemStore

/// Shares and participants through `any Store` (decisions P5): finding shares by record and URL
/// token, participants and invitations, membership of a record hierarchy, requests and blocks.
@Suite struct ShareConformanceTests {
    struct People {
        var fixture: Fixture
        var friend: UserAccount
        var share: StoredShare
    }

    /// The fixture's zone with a hierarchy `root` ← `child` ← `grandchild` plus `loose`, a
    /// share of `root` (URL token `guid-root`), and a second account `friend@example.com`.
    static func withShare(_ backend: StoreBackend, _ body: (any Store, People) throws -> Void) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let people = try store.write { tx in
                var root = fixture.record("root")
                root.share = "share-root"
                try tx.save(root, in: fixture.zone)
                var child = fixture.record("child")
                child.parent = "root"
                try tx.save(child, in: fixture.zone)
                var grandchild = fixture.record("grandchild")
                grandchild.parent = "child"
                try tx.save(grandchild, in: fixture.zone)
                try tx.save(fixture.record("loose"), in: fixture.zone)
                let friend = try tx.addUser(email: "friend@example.com", givenName: "Fay", familyName: nil, phoneNumber: nil, at: 1_500)
                try tx.mintShortGUID(zone: fixture.zone, rootName: "root", guid: "guid-root")
                let share = try tx.putShare(StoredShare(key: 0, zone: fixture.zone, recordName: "share-root", rootRecordName: "root",
                                                        shortGUID: "guid-root", publicPermission: .none, allowsAccessRequests: true,
                                                        createdAt: 2_000))
                return People(fixture: fixture, friend: friend, share: share)
            }
            try body(store, people)
        }
    }

    static func participant(_ id: String, user: String?, email: String? = nil, role: Share.Role = .privateUser,
                            status: Share.AcceptanceStatus) -> StoredParticipant {
        StoredParticipant(participantID: id, userRecordName: user, email: email, phone: nil, role: role, permission: .readWrite,
                          status: status, isApprovedRequester: false, addedAt: 2_000)
    }

    @Test(arguments: StoreBackend.all(for: .shares))
    func aShareIsFoundByRecordAndByURLToken(backend: StoreBackend) throws {
        try Self.withShare(backend) { store, people in
            let zone = people.fixture.zone
            try store.read { reader throws -> Void in
                #expect(try reader.share(zone: zone, recordName: "share-root") == people.share)
                #expect(try reader.shares(zone: zone) == [people.share])
                #expect(try reader.share(shortGUID: "guid-root", container: Fixture.container, environment: .development) == people.share)
                #expect(try reader.share(shortGUID: "guid-root", container: Fixture.container, environment: .production) == nil)
                let found = try #require(try reader.share(shortGUID: "guid-root"))
                #expect(found.share == people.share)
                #expect(found.container == Fixture.container)
                #expect(found.environment == .development)
                #expect(try reader.shortGUID(zone: zone, rootName: "root") == "guid-root")
                #expect(try reader.share(shortGUID: "guid-absent") == nil)
            }
            // Updating by zone and record name keeps the key.
            let updated = try store.write { tx in
                var changed = people.share
                changed.publicPermission = .readOnly
                return try tx.putShare(changed)
            }
            #expect(updated.key == people.share.key)
            #expect(try store.read { try $0.share(zone: people.fixture.zone, recordName: "share-root") }?.publicPermission == .readOnly)
        }
    }

    @Test(arguments: StoreBackend.all(for: .shares))
    func participantsInvitationsAndAcceptedShares(backend: StoreBackend) throws {
        try Self.withShare(backend) { store, people in
            let owner = people.fixture.owner.recordName
            try store.write { tx in
                try tx.putParticipant(Self.participant("p-owner", user: owner, role: .owner, status: .accepted), share: people.share)
                try tx.putParticipant(Self.participant("p-friend", user: people.friend.recordName, status: .accepted), share: people.share)
                try tx.putParticipant(Self.participant("p-invitee", user: nil, email: "later@example.com", status: .pending), share: people.share)
            }
            let participants = try store.read { try $0.participants(share: people.share) }
            #expect(Set(participants.map(\.participantID)) == ["p-owner", "p-friend", "p-invitee"])
            let accepted = try store.read { try $0.acceptedShares(user: people.friend.recordName, container: Fixture.container, environment: .development) }
            #expect(accepted.map(\.0) == [people.share])
            #expect(accepted.map(\.1.participantID) == ["p-friend"])
            #expect(try store.read { try $0.acceptedParticipants(zone: people.fixture.zone) }.contains(people.friend.recordName))
            let mine = try store.read { try $0.participations(zone: people.fixture.zone, user: people.friend.recordName) }
            #expect(mine[people.share.key]?.participantID == "p-friend")
            // An account made for the invited address takes the invitation over.
            let later = try store.write { tx in
                try tx.addUser(email: "later@example.com", givenName: nil, familyName: nil, phoneNumber: nil, at: 3_000)
            }
            let linked = try store.read { try $0.participants(share: people.share) }.first { $0.participantID == "p-invitee" }
            #expect(linked?.userRecordName == later.recordName)
            #expect(linked?.status == .pending)
            // Removing a participant ends their access.
            try store.write { tx in try tx.deleteParticipant(participantID: "p-friend") }
            #expect(try store.read { try $0.acceptedShares(user: people.friend.recordName, container: Fixture.container, environment: .development) }.isEmpty)
            #expect(try !store.read { try $0.acceptedParticipants(zone: people.fixture.zone) }.contains(people.friend.recordName))
        }
    }

    @Test(arguments: StoreBackend.all(for: .shares))
    func membershipFollowsTheHierarchyAndLogsEachMove(backend: StoreBackend) throws {
        try Self.withShare(backend) { store, people in
            let zone = people.fixture.zone
            let before = try #require(try store.read { try $0.zone(people.fixture.scope, name: "notes") }).changeSequence
            let moved = try store.write { tx in try tx.setMembership(zone: zone, subtreeOf: "root", to: "share-root") }
            #expect(moved == 3)
            try store.read { reader throws -> Void in
                #expect(try reader.recordWithMembership(zone: zone, name: "grandchild")?.membership == "share-root")
                #expect(try reader.recordWithMembership(zone: zone, name: "loose")?.membership == nil)
                #expect(try reader.zone(people.fixture.scope, name: "notes")?.changeSequence == before + 3)
                let subtree = try reader.subtree(zone: zone, of: "root")
                #expect(subtree.count == 3)
                #expect(subtree.shareRoots == ["root"])
                #expect(try reader.ancestors(zone: zone, of: "grandchild", limit: 10) == ["child", "root"])
                let seen = try reader.query(Query(recordType: "Note"), zones: [zone], limit: 10, after: nil, memberships: ["share-root"])
                #expect(Set(seen.map(\.record.recordName)) == ["root", "child", "grandchild"])
            }
            // Deleting the share takes its people and the records' membership with it.
            try store.write { tx in
                try tx.putParticipant(Self.participant("p-friend", user: people.friend.recordName, status: .accepted), share: people.share)
                try tx.deleteShare(people.share)
            }
            try store.read { reader throws -> Void in
                #expect(try reader.share(zone: zone, recordName: "share-root") == nil)
                #expect(try reader.recordWithMembership(zone: zone, name: "child")?.membership == nil)
                #expect(try reader.acceptedShares(user: people.friend.recordName, container: Fixture.container, environment: .development).isEmpty)
            }
        }
    }

    @Test(arguments: StoreBackend.all(for: .shares))
    func accessRequestsAndBlocks(backend: StoreBackend) throws {
        try Self.withShare(backend) { store, people in
            let friend = people.friend.recordName
            try store.write { tx in
                try tx.addRequester(friend, share: people.share, at: 2_500)
                try tx.addRequester(people.fixture.owner.recordName, share: people.share, at: 2_600)
            }
            #expect(try store.read { try $0.requesters(share: people.share) } == [friend, people.fixture.owner.recordName])
            try store.write { tx in
                try tx.removeRequester(friend, share: people.share)
                try tx.setBlocked(friend, blocked: true, share: people.share, at: 2_700)
            }
            #expect(try store.read { try $0.requesters(share: people.share) } == [people.fixture.owner.recordName])
            #expect(try store.read { try $0.blockedUsers(share: people.share) } == [friend])
            try store.write { tx in try tx.setBlocked(friend, blocked: false, share: people.share, at: 2_800) }
            #expect(try store.read { try $0.blockedUsers(share: people.share) }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .shares))
    func lookupsAndSharingPartners(backend: StoreBackend) throws {
        try Self.withShare(backend) { store, people in
            try store.write { tx in
                try tx.putParticipant(Self.participant("p-friend", user: people.friend.recordName, status: .accepted), share: people.share)
            }
            try store.read { reader throws -> Void in
                #expect(try reader.user(matching: UserIdentity(emailAddress: "friend@example.com"))?.recordName == people.friend.recordName)
                #expect(try reader.user(matching: UserIdentity(userRecordName: people.friend.recordName))?.email == "friend@example.com")
                #expect(try reader.user(matching: UserIdentity(emailAddress: "nobody@example.com")) == nil)
                let partners = try reader.sharingPartners(of: people.friend.recordName, container: Fixture.container, environment: .development)
                #expect(partners.map(\.recordName) == [people.fixture.owner.recordName])
            }
        }
    }

    /// R32: the owner and accepted participants of one share, and members of one conversation,
    /// see each other's names and faces; an invitee, a removed participant and a stranger do not.
    @Test(arguments: StoreBackend.all(for: .shares))
    func peopleShareAConversationOrAShare(backend: StoreBackend) throws {
        try Self.withShare(backend) { store, people in
            let (owner, friend) = (people.fixture.owner.recordName, people.friend.recordName)
            let (other, stranger) = try store.write { tx in
                (try tx.addUser(email: "other@example.com", givenName: "Oli", familyName: nil, phoneNumber: nil, at: 1_600).recordName,
                 try tx.addUser(email: "stranger@example.com", givenName: "Sam", familyName: nil, phoneNumber: nil, at: 1_700).recordName)
            }
            let related = { (a: String, b: String) in try store.read { try $0.sharesConversationOrShare(a, with: b) } }
            try store.write { tx in
                try tx.putParticipant(Self.participant("p-friend", user: friend, status: .pending), share: people.share)
            }
            #expect(try !related(owner, friend), "an invitation is not enough")
            try store.write { tx in
                try tx.putParticipant(Self.participant("p-friend", user: friend, status: .accepted), share: people.share)
                try tx.putParticipant(Self.participant("p-other", user: other, status: .accepted), share: people.share)
            }
            #expect(try related(owner, friend) && related(friend, owner), "owner and accepted participant, both ways")
            #expect(try related(friend, other), "two accepted participants")
            #expect(try !related(owner, stranger) && !related(stranger, friend))
            #expect(try !related(owner, owner), "the same person is asked apart")
            try store.write { tx in
                try tx.putParticipant(Self.participant("p-other", user: other, status: .removed), share: people.share)
            }
            #expect(try !related(owner, other) && !related(friend, other), "a removed participant no longer")

            let conversation = StoredConversation(id: "conv-faces", container: Fixture.container, environment: .development, isGroup: false,
                                                  title: nil, createdBy: stranger, createdAt: 3_000, members: [stranger, other])
            try store.write { tx in try tx.insertConversation(conversation) }
            #expect(try related(stranger, other) && related(other, stranger), "members of one conversation")
            #expect(try !related(stranger, owner))

            try store.write { tx in try tx.setNames(user: stranger, givenName: "Samuel", familyName: "Stone") }
            let renamed = try #require(try store.read { try $0.user(recordNameOrEmail: stranger) })
            #expect(renamed.givenName == "Samuel" && renamed.familyName == "Stone")
            #expect(try store.read { try $0.profile(user: stranger) }?.displayName == "Samuel Stone")
            try store.write { tx in try tx.setNames(user: stranger, givenName: nil, familyName: nil) }
            #expect(try store.read { try $0.user(recordNameOrEmail: stranger) }?.givenName == nil)
            #expect(try store.read { try $0.profile(user: stranger) }?.displayName == nil)
        }
    }
}
