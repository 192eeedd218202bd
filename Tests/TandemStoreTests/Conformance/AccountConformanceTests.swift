import Synchronization
import Testing
import TandemCore
import TandemStore

/// Accounts through `any Store` (decisions P5, P30): profiles, sign-in methods, consents, emailed
/// links (A15's one use, expiry, the newest), the invitation email setting (A31), avatars (P6's
/// in-use rule) and account deletion with what it reads (A15).
@Suite struct AccountConformanceTests {
    static func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    static func addFriend(_ store: any Store, email: String = "friend@example.com") throws -> UserAccount {
        try store.write { tx in try tx.addUser(email: email, givenName: "Fay", familyName: nil, phoneNumber: nil, at: 1_500) }
    }

    // MARK: Profiles and settings

    @Test(arguments: StoreBackend.all(for: .accounts))
    func profilesAreListedOldestFirstAndShowVerification(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let vera = try store.write { tx in try tx.addVerifiedUser(email: "vera@example.com", displayName: "Vera", at: 2_000) }
            #expect(vera.email == "vera@example.com")
            #expect(vera.givenName == "Vera")
            let expectedVera = AccountProfile(recordName: vera.recordName, email: "vera@example.com", emailVerified: true,
                                              displayName: "Vera", createdAt: 2_000)
            let expectedOwner = AccountProfile(recordName: owner, email: "owner@example.com", emailVerified: false, displayName: nil,
                                               createdAt: 1_000)
            #expect(try store.read { try $0.profile(user: vera.recordName) } == expectedVera)
            #expect(try store.read { try $0.profile(user: owner) } == expectedOwner)
            #expect(try store.read { try $0.profile(user: "_absent") } == nil)
            #expect(try store.read { try $0.profiles(limit: 10) } == [expectedOwner, expectedVera])
            #expect(try store.read { try $0.profiles(limit: 1) } == [expectedOwner])

            try store.write { tx in
                try tx.setEmailVerified(user: owner, true)
                try tx.setEmailVerified(user: vera.recordName, false)
            }
            #expect(try store.read { try $0.profile(user: owner) }?.emailVerified == true)
            #expect(try store.read { try $0.profile(user: vera.recordName) }?.emailVerified == false)
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func invitationEmailsAreOnUntilTurnedOff(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            #expect(try store.read { try $0.invitationEmails(user: owner) })
            #expect(try store.read { try $0.invitationEmails(user: "_no_such_account") }, "a record name with no account is on")
            try store.write { tx in try tx.setInvitationEmails(user: owner, false) }
            #expect(try !store.read { try $0.invitationEmails(user: owner) })
            try store.write { tx in try tx.setInvitationEmails(user: owner, true) }
            #expect(try store.read { try $0.invitationEmails(user: owner) })
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func consentIsPerContainerAndGivenOnce(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            _ = try store.write { tx in try tx.createContainer("iCloud.other", at: 1_000) }
            #expect(try !store.read { try $0.hasConsent(user: owner, container: Fixture.container) })
            try store.write { tx in try tx.addConsent(user: owner, container: Fixture.container, at: 2_000) }
            try store.write { tx in try tx.addConsent(user: owner, container: Fixture.container, at: 3_000) }
            #expect(try store.read { try $0.hasConsent(user: owner, container: Fixture.container) })
            #expect(try !store.read { try $0.hasConsent(user: owner, container: "iCloud.other") })
        }
    }

    // MARK: Sign-in methods

    @Test(arguments: StoreBackend.all(for: .accounts))
    func signInMethodsArePutReplacedTouchedAndFound(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let friend = try Self.addFriend(store).recordName
            try store.write { tx in
                try tx.putSignInMethod(user: owner, StoredSignInMethod(kind: "password", subject: "", secret: "hash-1", createdAt: 1_000))
                try tx.putSignInMethod(user: owner, StoredSignInMethod(kind: "passkey", subject: "cred-1", secret: "pk-1", createdAt: 1_500))
                try tx.putSignInMethod(user: owner, StoredSignInMethod(kind: "passkey", subject: "cred-0", secret: "pk-0", createdAt: 1_500))
                try tx.putSignInMethod(user: friend, StoredSignInMethod(kind: "passkey", subject: "cred-9", secret: "pk-9", createdAt: 1_200))
            }
            // Putting the same kind and subject again replaces the secret only.
            try store.write { tx in
                try tx.putSignInMethod(user: owner, StoredSignInMethod(kind: "password", subject: "", secret: "hash-2", createdAt: 9_000,
                                                                       lastUsedAt: 9_000))
                try tx.touchSignInMethod(user: owner, kind: "passkey", subject: "cred-1", at: 3_000)
                // Touching names the user too: the friend's method is not the owner's.
                try tx.touchSignInMethod(user: owner, kind: "passkey", subject: "cred-9", at: 3_000)
            }
            let expected = [
                StoredSignInMethod(kind: "password", subject: "", secret: "hash-2", createdAt: 1_000),
                StoredSignInMethod(kind: "passkey", subject: "cred-0", secret: "pk-0", createdAt: 1_500),
                StoredSignInMethod(kind: "passkey", subject: "cred-1", secret: "pk-1", createdAt: 1_500, lastUsedAt: 3_000),
            ]
            #expect(try store.read { try $0.signInMethods(user: owner) } == expected, "by creation, then kind and subject")
            #expect(try store.read { try $0.signInMethods(user: friend) }
                    == [StoredSignInMethod(kind: "passkey", subject: "cred-9", secret: "pk-9", createdAt: 1_200)])
            #expect(try store.read { try $0.signInMethods(user: "_absent") } == [])
        }
    }

    struct MethodLookup: Sendable, CustomTestStringConvertible {
        var kind: String
        var subject: String
        /// Whose method it finds (`owner`, `friend`) and its secret; nil when none.
        var found: (who: String, secret: String)?
        var testDescription: String { "\(kind) \(subject.isEmpty ? "(no subject)" : subject)" }

        static let all = [
            MethodLookup(kind: "passkey", subject: "cred-1", found: ("owner", "pk-1")),
            MethodLookup(kind: "passkey", subject: "cred-9", found: ("friend", "pk-9")),
            MethodLookup(kind: "password", subject: "", found: ("owner", "hash-1")),
            MethodLookup(kind: "passkey", subject: "CRED-1", found: nil),
            MethodLookup(kind: "password", subject: "cred-1", found: nil),
            MethodLookup(kind: "passkey", subject: "", found: nil),
        ]
    }

    @Test(arguments: StoreBackend.all(for: .accounts), MethodLookup.all)
    func aSignInMethodIsFoundByKindAndSubject(backend: StoreBackend, lookup: MethodLookup) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let friend = try Self.addFriend(store).recordName
            try store.write { tx in
                try tx.putSignInMethod(user: owner, StoredSignInMethod(kind: "password", subject: "", secret: "hash-1", createdAt: 1_000))
                try tx.putSignInMethod(user: owner, StoredSignInMethod(kind: "passkey", subject: "cred-1", secret: "pk-1", createdAt: 1_100))
                try tx.putSignInMethod(user: friend, StoredSignInMethod(kind: "passkey", subject: "cred-9", secret: "pk-9", createdAt: 1_200))
            }
            let found = try store.read { try $0.signInMethod(kind: lookup.kind, subject: lookup.subject) }
            let user = try store.read { try $0.user(signInKind: lookup.kind, subject: lookup.subject) }
            if let expected = lookup.found {
                let record = expected.who == "owner" ? owner : friend
                #expect(found?.user == record)
                #expect(found?.method.kind == lookup.kind)
                #expect(found?.method.subject == lookup.subject)
                #expect(found?.method.secret == expected.secret)
                #expect(user?.recordName == record)
                #expect(user?.email == (expected.who == "owner" ? "owner@example.com" : "friend@example.com"))
            } else {
                #expect(found == nil)
                #expect(user == nil)
            }
        }
    }

    // MARK: Emailed links

    struct LinkUse: Sendable, CustomTestStringConvertible {
        var label: String
        /// Which link is used (1: the link made, expiring at 5 000; 9: a link never made).
        var hash: UInt8
        /// Whether the link was used once already, at 2 000.
        var usedBefore: Bool
        var at: Int64
        var works: Bool
        var testDescription: String { label }

        static let all = [
            LinkUse(label: "unused, before its expiry", hash: 1, usedBefore: false, at: 4_999, works: true),
            LinkUse(label: "at its expiry", hash: 1, usedBefore: false, at: 5_000, works: false),
            LinkUse(label: "after its expiry", hash: 1, usedBefore: false, at: 6_000, works: false),
            LinkUse(label: "used once already", hash: 1, usedBefore: true, at: 3_000, works: false),
            LinkUse(label: "never made", hash: 9, usedBefore: false, at: 3_000, works: false),
        ]
    }

    @Test(arguments: StoreBackend.all(for: .accounts), LinkUse.all)
    func anEmailedLinkWorksOnceBeforeItExpires(backend: StoreBackend, use: LinkUse) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let link = AccountLink(hash: Self.hash(1), purpose: .reset, email: "owner@example.com", userRecordName: owner,
                                   createdAt: 1_000, expiresAt: 5_000)
            try store.write { tx in try tx.addAccountLink(link) }
            #expect(try store.read { try $0.accountLink(hash: Self.hash(1)) } == link)
            if use.usedBefore {
                #expect(try store.write { try $0.useAccountLink(hash: Self.hash(1), at: 2_000) })
            }
            #expect(try store.write { try $0.useAccountLink(hash: Self.hash(use.hash), at: use.at) } == use.works)
            let usedAt: Int64? = use.usedBefore ? 2_000 : use.works ? use.at : nil
            #expect(try store.read { try $0.accountLink(hash: Self.hash(1)) }?.usedAt == usedAt)
            #expect(try store.read { try $0.accountLink(hash: Self.hash(9)) } == nil)
        }
    }

    struct NewestLink: Sendable, CustomTestStringConvertible {
        var email: String
        var purpose: AccountLink.Purpose
        var at: Int64
        /// The hash byte of the link expected, nil for none.
        var newest: UInt8?
        var testDescription: String { "\(purpose) for \(email) at \(at)" }

        static let all = [
            NewestLink(email: "new@example.com", purpose: .signup, at: 3_000, newest: 3),
            NewestLink(email: "new@example.com", purpose: .signup, at: 4_000, newest: 2),
            NewestLink(email: "new@example.com", purpose: .signup, at: 5_500, newest: 2),
            NewestLink(email: "new@example.com", purpose: .signup, at: 6_000, newest: nil),
            NewestLink(email: "NEW@Example.com", purpose: .signup, at: 4_000, newest: 2),
            NewestLink(email: "new@example.com", purpose: .reset, at: 4_000, newest: 4),
            NewestLink(email: "other@example.com", purpose: .signup, at: 4_000, newest: nil),
        ]
    }

    /// Sign-up links 1 (made at 1 000, expiring 5 000), 2 (2 000, 6 000) and 3 (3 000, 3 500) and
    /// reset link 4 (2 500, 7 000), all for `new@example.com`.
    static func addLinks(_ store: any Store) throws {
        try store.write { tx in
            try tx.addAccountLink(AccountLink(hash: hash(1), purpose: .signup, email: "new@example.com", displayName: "Nia",
                                              pendingSecret: "argon-1", createdAt: 1_000, expiresAt: 5_000))
            try tx.addAccountLink(AccountLink(hash: hash(2), purpose: .signup, email: "new@example.com", createdAt: 2_000, expiresAt: 6_000))
            try tx.addAccountLink(AccountLink(hash: hash(3), purpose: .signup, email: "new@example.com", createdAt: 3_000, expiresAt: 3_500))
            try tx.addAccountLink(AccountLink(hash: hash(4), purpose: .reset, email: "new@example.com", createdAt: 2_500, expiresAt: 7_000))
        }
    }

    /// One email address as stored and as asked for, and whether the two are the same address.
    struct EmailMatch: Sendable, CustomTestStringConvertible {
        var stored: String
        var asked: String
        var same: Bool
        var testDescription: String { "\(stored) and \(asked): \(same ? "one" : "two")" }

        /// SQLite's NOCASE folds ASCII letters only, and PostgreSQL's `tandem_fold` the same
        /// (P79); before it, PostgreSQL's ICU collation made every "two" row below one (review 47).
        static let all = [
            EmailMatch(stored: "ada@example.com", asked: "ada@example.com", same: true),
            EmailMatch(stored: "ada@example.com", asked: "ADA@Example.COM", same: true),
            EmailMatch(stored: "ada@example.com", asked: "\u{FF41}\u{FF44}\u{FF41}@example.com", same: false),
            EmailMatch(stored: "ada@example.com", asked: "ad\u{200B}a@example.com", same: false),
            EmailMatch(stored: "\u{C9}mile@example.com", asked: "\u{E9}mile@example.com", same: false),
            EmailMatch(stored: "\u{C9}mile@example.com", asked: "\u{C9}MILE@EXAMPLE.com", same: true),
            EmailMatch(stored: "stra\u{DF}e@example.com", asked: "STRASSE@example.com", same: false),
            EmailMatch(stored: "\u{130}nci@example.com", asked: "inci@example.com", same: false),
            EmailMatch(stored: "e\u{301}mile@example.com", asked: "\u{E9}mile@example.com", same: false),
        ]
    }

    @Test(arguments: StoreBackend.all(for: .accounts), EmailMatch.all)
    func emailsAndHandlesCompareFoldingASCIILettersOnly(backend: StoreBackend, match: EmailMatch) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let stored = try Self.addFriend(store, email: match.stored)
            let found = try store.read { reader in
                (try reader.user(recordNameOrEmail: match.asked)?.recordName,
                 try reader.user(matching: UserIdentity(emailAddress: match.asked))?.recordName)
            }
            #expect(found.0 == (match.same ? stored.recordName : nil))
            #expect(found.1 == (match.same ? stored.recordName : nil))
            if match.same {
                #expect(throws: (any Error).self) { try Self.addFriend(store, email: match.asked) }
            } else {
                let other = try Self.addFriend(store, email: match.asked)
                #expect(other.recordName != stored.recordName)
                #expect(try store.read { try $0.user(recordNameOrEmail: match.asked)?.recordName } == other.recordName)
            }
            // Contact handles: one contact when the handles are one address.
            try store.write { tx in
                try tx.putContact(owner: owner, StoredContact(handle: match.stored, userRecordName: nil))
                try tx.putContact(owner: owner, StoredContact(handle: match.asked, userRecordName: stored.recordName))
            }
            let contacts = try store.read { try $0.contacts(owner: owner) }
            #expect(contacts.count == (match.same ? 1 : 2))
            // Emailed links: a link to one is the newest link for the other when they are one.
            try store.write { tx in
                try tx.addAccountLink(AccountLink(hash: Self.hash(7), purpose: .reset, email: match.stored, createdAt: 1_000, expiresAt: 5_000))
            }
            let link = try store.read { try $0.newestAccountLink(email: match.asked, purpose: .reset, at: 2_000) }
            #expect(link?.hash == (match.same ? Self.hash(7) : nil))
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts), NewestLink.all)
    func theNewestLinkIsUnusedAndUnexpired(backend: StoreBackend, newest: NewestLink) throws {
        try backend.withStore { store in
            try Self.addLinks(store)
            let found = try store.read { try $0.newestAccountLink(email: newest.email, purpose: newest.purpose, at: newest.at) }
            #expect(found?.hash == newest.newest.map(Self.hash))
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func usingALinkVoidsItsRivalsAndNewLinksSweepExpiredOnes(backend: StoreBackend) throws {
        try backend.withStore { store in
            try Self.addLinks(store)
            let first = try #require(try store.read { try $0.accountLink(hash: Self.hash(1)) })
            #expect(first == AccountLink(hash: Self.hash(1), purpose: .signup, email: "new@example.com", displayName: "Nia",
                                         pendingSecret: "argon-1", createdAt: 1_000, expiresAt: 5_000))
            #expect(try store.write { try $0.useAccountLink(hash: Self.hash(2), at: 3_200) })
            try store.read { reader throws -> Void in
                #expect(try reader.accountLink(hash: Self.hash(1))?.usedAt == 3_200, "an older sign-up link for the address")
                #expect(try reader.accountLink(hash: Self.hash(3))?.usedAt == 3_200, "a newer rival sign-up link")
                #expect(try reader.accountLink(hash: Self.hash(4))?.usedAt == nil, "a link of another purpose")
                #expect(try reader.newestAccountLink(email: "new@example.com", purpose: .signup, at: 3_200) == nil)
            }
            #expect(try !store.write { try $0.useAccountLink(hash: Self.hash(1), at: 3_300) })

            // A link made at 5 500 forgets those that expired before then (1 and 3), not the rest.
            try store.write { tx in
                try tx.addAccountLink(AccountLink(hash: Self.hash(5), purpose: .signup, email: "late@example.com", createdAt: 5_500,
                                                  expiresAt: 9_000))
            }
            try store.read { reader throws -> Void in
                #expect(try reader.accountLink(hash: Self.hash(1)) == nil)
                #expect(try reader.accountLink(hash: Self.hash(3)) == nil)
                #expect(try reader.accountLink(hash: Self.hash(2))?.usedAt == 3_200)
                #expect(try reader.accountLink(hash: Self.hash(4)) != nil)
                #expect(try reader.accountLink(hash: Self.hash(5))?.email == "late@example.com")
            }
        }
    }

    /// Six writers follow the three rival sign-up links for one address at once (two each): one
    /// creates the account, the others find every link void, whether they lost the race on the
    /// same link or on a rival one (P3; losers of a PostgreSQL race retry as clients do).
    @Test(arguments: StoreBackend.all(for: .accounts))
    func ofWritersFollowingRivalLinksExactlyOneSucceeds(backend: StoreBackend) throws {
        try backend.withStore { store in
            try Self.addLinks(store)
            let successes = Mutex<[Int]>([])
            onThreads(6) { writer in
                do {
                    let hash = Self.hash(UInt8(1 + writer % 3))
                    if try ConcurrencyConformanceTests.retrying({ try store.write { try $0.useAccountLink(hash: hash, at: 3_000) } }) {
                        successes.withLock { $0.append(writer) }
                    }
                } catch {
                    Issue.record("writer \(writer): \(error)")
                }
            }
            let winner = try #require(successes.withLock { $0 }.first)
            #expect(successes.withLock { $0.count } == 1)
            let used = try store.read { reader in try [1, 2, 3].map { try reader.accountLink(hash: Self.hash($0))?.usedAt } }
            #expect(used == [3_000, 3_000, 3_000], "the winner's link and its rivals, by link \(1 + winner % 3)")
            #expect(try store.read { try $0.accountLink(hash: Self.hash(4)) }?.usedAt == nil)
        }
    }

    // MARK: Avatars

    struct AvatarStep: Sendable {
        var who: String
        var checksum: String?
        /// What `setAvatar` returns: the checksum left unused, whose file may go (P6).
        var unused: String?
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func aReplacedAvatarIsReportedUnusedOnlyWhenNoAccountHoldsIt(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let friend = try Self.addFriend(store).recordName
            let a = String(repeating: "a", count: 64), b = String(repeating: "b", count: 64)
            let steps = [
                AvatarStep(who: owner, checksum: a, unused: nil),
                AvatarStep(who: friend, checksum: a, unused: nil),
                AvatarStep(who: owner, checksum: b, unused: nil),  // the friend still holds a
                AvatarStep(who: owner, checksum: b, unused: nil),  // the same picture again
                AvatarStep(who: friend, checksum: nil, unused: a),
                AvatarStep(who: owner, checksum: a, unused: b),
                AvatarStep(who: owner, checksum: nil, unused: a),
                AvatarStep(who: owner, checksum: nil, unused: nil),
            ]
            for (index, step) in steps.enumerated() {
                let avatar = step.checksum.map { Avatar(checksum: $0, contentType: "image/png") }
                let unused = try store.write { tx in try tx.setAvatar(user: step.who, avatar) }
                #expect(unused == step.unused, "step \(index)")
                let held = try store.read { try $0.user(recordNameOrEmail: step.who) }?.avatar
                #expect(held == avatar, "step \(index)")
                if let unused { #expect(try !store.read { try $0.avatarInUse(checksum: unused) }, "step \(index)") }
                if let checksum = step.checksum { #expect(try store.read { try $0.avatarInUse(checksum: checksum) }, "step \(index)") }
            }
            #expect(throws: AvatarAccountGone.self) {
                try store.write { tx in try tx.setAvatar(user: "_absent", Avatar(checksum: a, contentType: "image/png")) }
            }
            _ = try store.write { tx in try tx.eraseAccount(user: friend, at: 9_000) }
            #expect(throws: AvatarAccountGone.self) { try store.write { tx in try tx.setAvatar(user: friend, nil) } }
        }
    }

    // MARK: Account deletion

    @Test(arguments: StoreBackend.all(for: .accounts))
    func erasingAnAccountLeavesOnlyItsNamelessRow(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let owner = fixture.owner
            let friend = try Self.addFriend(store)
            let userGrant = TokenGrant(kind: .user, user: owner, container: Fixture.container)
            try store.write { tx in
                try tx.addToken(hash: Self.hash(1), grant: userGrant, at: 1_000)
                try tx.addToken(hash: Self.hash(2), grant: TokenGrant(kind: .user, user: owner, container: nil,
                                                                      session: TokenSession(expiresAt: 1_500)), at: 1_000)
                try tx.addToken(hash: Self.hash(3), grant: userGrant, at: 1_000)
                _ = try tx.rotateToken(hash: Self.hash(3), to: Self.hash(4), grant: userGrant, at: 2_000)
                try tx.addToken(hash: Self.hash(5), grant: TokenGrant(kind: .user, user: friend, container: nil), at: 1_000)
                for user in [owner.recordName, friend.recordName] {
                    try tx.putSignInMethod(user: user, StoredSignInMethod(kind: "passkey", subject: "cred-" + user, secret: "pk",
                                                                          createdAt: 1_000))
                    try tx.addConsent(user: user, container: Fixture.container, at: 1_000)
                    try tx.addAssetUpload(AssetUpload(token: "upload-" + user, container: Fixture.container, environment: .development,
                                                      owner: user, recordType: "Note", fieldName: "file", recordName: nil,
                                                      expiresAt: 99_000))
                    try tx.putSubscription(SubscriptionConformanceTests.stored(user, "all-changes"), at: 1_000)
                }
                try tx.addAccountLink(AccountLink(hash: Self.hash(6), purpose: .reset, email: "owner@example.com",
                                                  userRecordName: owner.recordName, createdAt: 1_000, expiresAt: 99_000))
                // A sign-up someone started with the owner's address (in other letters), not yet followed.
                try tx.addAccountLink(AccountLink(hash: Self.hash(7), purpose: .signup, email: "OWNER@example.com", createdAt: 1_000,
                                                  expiresAt: 99_000))
                try tx.addAccountLink(AccountLink(hash: Self.hash(8), purpose: .reset, email: "friend@example.com",
                                                  userRecordName: friend.recordName, createdAt: 1_000, expiresAt: 99_000))
                try tx.save(fixture.record("kept"), in: fixture.zone)
            }

            #expect(try store.write { try $0.eraseAccount(user: owner.recordName, at: 5_000) } == 2,
                    "the working sessions: token 1 and token 3's successor, not the expired one nor the replaced one")

            try store.read { reader throws -> Void in
                let rn = owner.recordName
                #expect(try reader.user(recordNameOrEmail: rn) == nil)
                #expect(try reader.user(recordNameOrEmail: "owner@example.com") == nil)
                #expect(try reader.profile(user: rn) == AccountProfile(recordName: rn, email: nil, emailVerified: false, displayName: nil,
                                                                       createdAt: 1_000))
                for byte: UInt8 in [1, 2, 3, 4] {
                    #expect(try reader.grant(forTokenHash: Self.hash(byte))?.session.revokedAt != nil, "token \(byte)")
                }
                #expect(try reader.grant(forTokenHash: Self.hash(2))?.session.revokedAt == 5_000)
                #expect(try reader.sessions(user: rn) == [])
                #expect(try reader.signInMethods(user: rn) == [])
                #expect(try reader.signInMethod(kind: "passkey", subject: "cred-" + rn) == nil)
                #expect(try !reader.hasConsent(user: rn, container: Fixture.container))
                #expect(try reader.accountLink(hash: Self.hash(6)) == nil)
                #expect(try reader.accountLink(hash: Self.hash(7)) == nil, "a link addressed to the account's email goes too")
                #expect(try reader.assetUpload(token: "upload-" + rn) == nil)
                #expect(try reader.subscriptions(owner: rn, limit: 10) == [])
                // Its data is the deletion service's to remove, before this last step.
                #expect(try reader.recordCount(zone: fixture.zone) == 1)

                let other = friend.recordName
                #expect(try reader.user(recordNameOrEmail: "friend@example.com")?.recordName == other)
                #expect(try reader.grant(forTokenHash: Self.hash(5))?.session.revokedAt == nil)
                #expect(try reader.sessions(user: other).count == 1)
                #expect(try reader.signInMethods(user: other).count == 1)
                #expect(try reader.hasConsent(user: other, container: Fixture.container))
                #expect(try reader.accountLink(hash: Self.hash(8)) != nil)
                #expect(try reader.assetUpload(token: "upload-" + other) != nil)
                #expect(try reader.subscriptions(owner: other, limit: 10).count == 1)
            }
            // The email can sign up again, as a new account.
            let again = try store.write { tx in try tx.addUser(email: "owner@example.com", givenName: nil, familyName: nil, phoneNumber: nil,
                                                                 at: 6_000) }
            #expect(again.recordName != owner.recordName)
            #expect(try store.read { try $0.user(recordNameOrEmail: "owner@example.com") }?.recordName == again.recordName)
        }
    }

    /// The console half of erasing an account: its administrator flag and console sessions.
    @Test(arguments: StoreBackend.all(for: .console))
    func erasingAnAccountEndsItsConsoleRights(backend: StoreBackend) throws {
        try backend.withStore { store in
            let owner = try Fixture.make(store).owner.recordName
            let friend = try Self.addFriend(store).recordName
            try store.write { tx in
                for (byte, user) in [(UInt8(1), owner), (2, friend)] {
                    try tx.setServerAdmin(user: user, true)
                    try tx.addConsoleSession(hash: Self.hash(byte), user: user, at: 1_000, expiresAt: 99_000, idleMilliseconds: 60_000)
                }
            }
            _ = try store.write { tx in try tx.eraseAccount(user: owner, at: 5_000) }
            try store.read { reader throws -> Void in
                #expect(try !reader.isServerAdmin(user: owner))
                #expect(try reader.consoleSession(hash: Self.hash(1))?.revokedAt == 5_000)
                #expect(try reader.isServerAdmin(user: friend))
                #expect(try reader.consoleSession(hash: Self.hash(2))?.revokedAt == nil)
            }
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func privateZonesAndRecordCountsInEveryContainer(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let owner = fixture.owner.recordName
            let friend = try Self.addFriend(store).recordName
            let other = DatabaseScope(container: "iCloud.other", environment: .production, database: .private, owner: owner)
            let (photos, elsewhere) = try store.write { tx in
                _ = try tx.createContainer("iCloud.other", at: 1_000)
                let photos = try tx.ensureZone(Fixture.scope(owner: owner), name: "photos", at: 1_100)
                let elsewhere = try tx.ensureZone(other, name: "notes", at: 1_200)
                _ = try tx.ensureZone(Fixture.scope(owner: friend), name: "notes", at: 1_300)
                _ = try tx.ensureZone(Fixture.scope(owner: DatabaseScope.publicOwner, database: .public), name: "_defaultZone", at: 1_400)
                for name in ["a", "b", "c"] { try tx.save(fixture.record(name), in: fixture.zone) }
                try tx.remove("b", in: fixture.zone)
                return (photos, elsewhere)
            }
            let zones = try store.read { try $0.privateZones(owner: owner) }
            #expect(zones.map(\.zone.key) == [fixture.zone.key, photos.key, elsewhere.key])
            #expect(zones.map(\.zone.zoneID) == [fixture.zone.zoneID, photos.zoneID, ZoneID(zoneName: "notes", ownerRecordName: owner)])
            #expect(zones.map(\.container) == [Fixture.container, Fixture.container, "iCloud.other"])
            #expect(zones.map(\.environment) == [.development, .development, .production])
            #expect(zones.first?.zone.changeSequence == 4)
            #expect(try store.read { try $0.privateZones(owner: "_nobody") } == [])
            #expect(try store.read { try $0.recordCount(zone: fixture.zone) } == 2)
            #expect(try store.read { try $0.recordCount(zone: photos) } == 0)
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func participationsSkipRemovedPeople(backend: StoreBackend) throws {
        try ShareConformanceTests.withShare(backend) { store, people in
            let owner = people.fixture.owner.recordName
            let friend = people.friend.recordName
            let second = try store.write { tx in
                var loose = people.fixture.record("loose")
                loose.share = "share-loose"
                try tx.save(loose, in: people.fixture.zone)
                try tx.mintShortGUID(zone: people.fixture.zone, rootName: "loose", guid: "guid-loose")
                return try tx.putShare(StoredShare(key: 0, zone: people.fixture.zone, recordName: "share-loose", rootRecordName: "loose",
                                                   shortGUID: "guid-loose", publicPermission: .none, allowsAccessRequests: false,
                                                   createdAt: 2_100))
            }
            try store.write { tx in
                try tx.putParticipant(ShareConformanceTests.participant("p-owner", user: owner, role: .owner, status: .accepted),
                                      share: people.share)
                try tx.putParticipant(ShareConformanceTests.participant("p-friend", user: friend, status: .pending), share: people.share)
                try tx.putParticipant(ShareConformanceTests.participant("p-gone", user: friend, status: .removed), share: second)
                try tx.putParticipant(ShareConformanceTests.participant("p-owner-2", user: owner, role: .owner, status: .accepted),
                                      share: second)
            }
            let friendOf = try store.read { try $0.participations(user: friend) }
            #expect(friendOf.map(\.participant.participantID) == ["p-friend"])
            // The share as it is now: its zone's change sequence moved on since `people.share` was read.
            #expect(friendOf.first?.share.key == people.share.key)
            #expect(friendOf.first?.share.rootRecordName == "root")
            #expect(friendOf.first?.share.shortGUID == "guid-root")
            #expect(friendOf.first?.share.zone.key == people.fixture.zone.key)
            #expect(friendOf.first?.share.zone.changeSequence == 5)
            #expect(friendOf.first?.participant.status == .pending)
            #expect(friendOf.first?.container == Fixture.container)
            #expect(friendOf.first?.environment == .development)
            let ownerOf = try store.read { try $0.participations(user: owner) }
            #expect(ownerOf.map(\.participant.participantID) == ["p-owner", "p-owner-2"])
            #expect(ownerOf.map(\.share.recordName) == ["share-root", "share-loose"])
            #expect(try store.read { try $0.participations(user: "_nobody") } == [])
        }
    }

    // MARK: The record log (console)

    @Test(arguments: StoreBackend.all(for: .accounts))
    func theRecordLogShowsTheLatestChangeAndEachShareExitNewestFirst(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let (saved, left, deleted, other) = try store.write { tx in
                let saved = try tx.save(fixture.record("a", at: 2_000), in: fixture.zone, membership: "share-x")
                let left = try tx.save(fixture.record("a", at: 3_000), in: fixture.zone, membership: nil)
                let deleted = try tx.remove("a", in: fixture.zone)
                let other = try tx.save(fixture.record("b", type: "Photo", at: 2_500), in: fixture.zone)
                return (saved, left, deleted, other)
            }
            #expect(saved < left && left < deleted)
            let log = try store.read { try $0.recordLog(zone: fixture.zone, name: "a") }
            #expect(log.map(\.kind) == [.deleted, .leftShare])
            #expect(log.map(\.sequence) == [deleted, left])
            #expect(log.map(\.recordType) == ["Note", "Note"])
            #expect(log.last?.changedAt == 3_000)
            #expect(try store.read { try $0.recordLog(zone: fixture.zone, name: "b") }
                    == [RecordLogEntry(kind: .saved, sequence: other, changedAt: 2_500, recordType: "Photo")])
            #expect(try store.read { try $0.recordLog(zone: fixture.zone, name: "absent") } == [])
        }
    }
}
