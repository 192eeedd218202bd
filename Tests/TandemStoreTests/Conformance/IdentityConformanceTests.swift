import Testing
import TandemCore
import TandemStore

/// Device keys, collaboration identities and challenges through `any Store` (decisions P5).
@Suite struct IdentityConformanceTests {
    @Test(arguments: StoreBackend.all(for: .identity))
    func deviceKeysIdentitiesAndOneTimeChallenges(backend: StoreBackend) throws {
        try backend.withStore { store in
            let user = try Fixture.make(store).owner.recordName
            let key = [UInt8](repeating: 4, count: 65)
            #expect(try store.write { try $0.addDeviceKey(user: user, publicKey: key, at: 1_000) })
            #expect(try !store.write { try $0.addDeviceKey(user: user, publicKey: key, at: 2_000) }, "a key is registered once")
            #expect(try store.read { try $0.deviceKeys(user: user) }.map(\.publicKey) == [key])
            #expect(try store.read { try $0.deviceKeyOwner(key) } == user)
            #expect(try store.read { try $0.deviceKeyOwner([UInt8](repeating: 5, count: 65)) } == nil)

            let root = [UInt8](repeating: 9, count: 32)
            var identity = StoredIdentity(container: Fixture.container, environment: "development", collaboration: "collab-1", rootHash: root,
                                          userRecordName: user, issuedBy: user, leafKeys: key, state: .issued, createdAt: 1_000)
            try store.write { [identity] tx in try tx.putIdentity(identity) }
            identity.state = .active
            identity.boundUser = user
            identity.boundAt = 1_500
            try store.write { [identity] tx in try tx.putIdentity(identity) }
            let identities = try store.read { try $0.identities(container: Fixture.container, environment: "development", collaboration: "collab-1") }
            #expect(identities == [identity], "the same collaboration and root hash is replaced, not added")

            let challenge = IdentityChallenge(challenge: [UInt8](repeating: 1, count: 32), userRecordName: user, container: Fixture.container,
                                              environment: "development", collaboration: "collab-1", expiresAt: 10_000)
            try store.write { tx in try tx.addIdentityChallenge(challenge, at: 1_000) }
            #expect(try store.read { try $0.identityChallenge(challenge.challenge) } == challenge)
            #expect(try store.write { try $0.useIdentityChallenge(challenge.challenge, at: 2_000) })
            #expect(try !store.write { try $0.useIdentityChallenge(challenge.challenge, at: 2_001) }, "a challenge works once")
            #expect(try store.read { try $0.identityChallenge(challenge.challenge) }?.usedAt == 2_000)
        }
    }

    struct ProviderPerson: Sendable, CustomTestStringConvertible {
        var email: String?
        var displayName: String?
        var testDescription: String { "\(email ?? "no email"), \(displayName ?? "no name")" }

        static let all = [
            ProviderPerson(email: "ida@example.com", displayName: "Ida"),
            ProviderPerson(email: "ida@example.com", displayName: nil),
            ProviderPerson(email: nil, displayName: "Pat"),
            ProviderPerson(email: nil, displayName: nil),
        ]
    }

    /// An account an identity provider vouched for (A20): verified when the provider gave an
    /// email, found again by its `oidc` sign-in method, and given the invitations addressed to
    /// its email.
    @Test(arguments: StoreBackend.all(for: .identity), ProviderPerson.all)
    func providerAccountsAreFoundByTheirSignInSubject(backend: StoreBackend, person: ProviderPerson) throws {
        try ShareConformanceTests.withShare(backend) { store, people in
            try store.write { tx in
                try tx.putParticipant(ShareConformanceTests.participant("p-ida", user: nil, email: "ida@example.com", status: .pending),
                                      share: people.share)
            }
            let subject = "https://idp.example|sub-1"
            let account = try store.write { tx in
                let account = try tx.addProviderUser(email: person.email, displayName: person.displayName, at: 2_000)
                try tx.putSignInMethod(user: account.recordName, StoredSignInMethod(kind: "oidc", subject: subject, secret: "", createdAt: 2_000))
                return account
            }
            #expect(account.email == person.email)
            #expect(account.givenName == person.displayName)
            #expect(try store.read { try $0.user(signInKind: "oidc", subject: subject) } == account)
            #expect(try store.read { try $0.user(signInKind: "oidc", subject: "https://idp.example|sub-2") } == nil)
            #expect(try store.read { try $0.user(signInKind: "passkey", subject: subject) } == nil)
            #expect(try store.read { try $0.profile(user: account.recordName) }
                    == AccountProfile(recordName: account.recordName, email: person.email, emailVerified: person.email != nil,
                                      displayName: person.displayName, createdAt: 2_000))
            let invited = try store.read { try $0.participations(user: account.recordName) }.map(\.participant.participantID)
            #expect(invited == (person.email == nil ? [] : ["p-ida"]))
        }
    }
}
