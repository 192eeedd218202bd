import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Tandem
import TandemTestSupport

/// `Container.setAvatar(_:contentType:)`, `removeAvatar()`, `currentUserIdentity()` and
/// `UserIdentity.avatarURL` through the SDK against a real server (decisions A48).
@Suite("Avatars through the SDK")
struct AvatarTests {
    /// A 1×1 PNG.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!

    /// GET without credentials, as an image view would: the status and the bytes.
    func fetch(_ url: URL) async throws -> (Int, Data) {
        let (data, response) = try await URLSession.shared.data(from: url)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test func setShowAndRemoveAnAvatar() async throws {
        let server = TestServer.shared
        let (owner, ownerToken) = try server.addUser(email: "\(unique("pictured"))@example.com".lowercased(), name: "Pictured Person")
        let (_, readerToken) = try server.addUser(email: "\(unique("looker"))@example.com".lowercased(), name: "Looker On")
        let me = server.container(token: ownerToken)
        let them = server.container(token: readerToken)
        #expect(try await me.currentUserIdentity().avatarURL == nil)

        let url = try await me.setAvatar(Self.png, contentType: "image/png")
        let (status, bytes) = try await fetch(url)
        #expect(status == 200 && bytes == Self.png)
        let identity = try await me.currentUserIdentity()
        #expect(identity.userRecordID?.recordName == owner && identity.avatarURL == url)
        #expect(identity.nameComponents?.givenName == "Pictured")

        // Others see it where they see the name: once the owner is discoverable.
        let lookup = UserIdentity.LookupInfo(userRecordID: Record.ID(recordName: owner))
        #expect(try await them.userIdentity(for: lookup)?.avatarURL == nil)
        try await me.setDiscoverable(true)
        let seen = try #require(try await them.userIdentity(for: lookup)?.avatarURL)
        let (seenStatus, seenBytes) = try await fetch(seen)
        #expect(seenStatus == 200 && seenBytes == Self.png)

        try await me.removeAvatar()
        #expect(try await me.currentUserIdentity().avatarURL == nil)
        #expect(try await fetch(url).0 == 404)
        #expect(try await fetch(seen).0 == 404)
        #expect(try await them.userIdentity(for: lookup)?.avatarURL == nil)
    }

    @Test func badPicturesAndNoUserAreRefused() async throws {
        let server = TestServer.shared
        let (_, token) = try server.addUser(email: "\(unique("refused"))@example.com".lowercased(), name: "Refused Picture")
        let container = server.container(token: token)
        let kept = try await container.setAvatar(Self.png, contentType: "image/png")

        let tooBig = await #expect(throws: TandemError.self) {
            try await container.setAvatar(Self.png + Data(count: Container.maximumAvatarBytes), contentType: "image/png")
        }
        #expect(tooBig?.code == .limitExceeded && tooBig?.httpStatus == nil, "refused before sending: \(String(describing: tooBig))")
        let notThatType = await #expect(throws: TandemError.self) { try await container.setAvatar(Self.png, contentType: "image/jpeg") }
        #expect(notThatType?.code == .invalidArguments && notThatType?.serverErrorCode == "BAD_REQUEST", "\(String(describing: notThatType))")
        let gif = await #expect(throws: TandemError.self) { try await container.setAvatar(Data("GIF89a".utf8), contentType: "image/gif") }
        #expect(gif?.code == .invalidArguments && gif?.httpStatus == 415, "\(String(describing: gif))")
        #expect(try await container.currentUserIdentity().avatarURL.map { $0.path } == kept.path, "nothing changed")

        let signedOut = Container(identifier: TestServer.container, serverURL: server.serverURL, credentials: .none)
        let noUser = await #expect(throws: TandemError.self) { try await signedOut.setAvatar(Self.png, contentType: "image/png") }
        #expect(noUser?.code == .notAuthenticated)
    }
}
