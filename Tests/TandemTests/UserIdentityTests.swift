import Foundation
import Testing
import Tandem

@Suite("User identities")
struct UserIdentityTests {
    @Test func lookupByEmailNeedsDiscoverabilityLookupByIDDoesNot() async throws {
        let server = try TestServer()
        let (ada, bob) = (server.ada, server.bob)
        try await bob.setDiscoverable(false)
        #expect(try await ada.userIdentity(for: .init(emailAddress: "bob@example.com")) == nil, "not discoverable")
        let byID = try #require(try await ada.userIdentity(for: .init(userRecordID: Record.ID(recordName: server.bobRecordName))))
        #expect(byID.userRecordID?.recordName == server.bobRecordName)
        #expect(byID.nameComponents == nil, "names only for discoverable users")

        try await bob.setDiscoverable(true)
        let found = try #require(try await ada.userIdentity(for: .init(emailAddress: "bob@example.com")))
        #expect(found.userRecordID?.recordName == server.bobRecordName)
        #expect(found.nameComponents?.givenName == "Bob")
        #expect(found.lookupInfo?.emailAddress == "bob@example.com")
        #expect(try await ada.userIdentity(for: .init(emailAddress: "nobody@example.com")) == nil)
    }
}
