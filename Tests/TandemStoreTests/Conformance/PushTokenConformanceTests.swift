import Testing
import TandemCore
import TandemStore

/// Long-poll push tokens and their mailboxes through `any Store` (decisions N58): a token is one
/// user's, registered for several container environments; a user keeps their newest tokens;
/// a mailbox keeps its newest notifications and hands each out once, oldest first.
@Suite struct PushTokenConformanceTests {
    static let token = String(repeating: "a", count: 64)

    @Test(arguments: StoreBackend.all(for: .subscriptions))
    func aTokenIsOneUsersAndListsItsContainerEnvironments(backend: StoreBackend) throws {
        try backend.withStore { store in
            #expect(try store.read { try $0.pushToken(Self.token) } == nil)
            #expect(try store.write { try $0.registerPushToken(Self.token, user: "_ada", container: "c1", environment: "development",
                                                              at: 1, perUser: 20, maximum: 100) })
            #expect(try store.write { try $0.registerPushToken(Self.token, user: "_ada", container: "c2", environment: "production",
                                                              at: 2, perUser: 20, maximum: 100) })
            #expect(try !store.write { try $0.registerPushToken(Self.token, user: "_bob", container: "c1", environment: "development",
                                                               at: 3, perUser: 20, maximum: 100) }, "another user's token")
            let found = try #require(try store.read { try $0.pushToken(Self.token) })
            #expect(found == StoredPushToken(user: "_ada", scopes: [PushTokenScope(container: "c1", environment: "development"),
                                                                    PushTokenScope(container: "c2", environment: "production")], waiting: 0))
            #expect(try store.read { try $0.pushTokens(user: "_ada", container: "c1", environment: "development") } == [Self.token])
            #expect(try store.read { try $0.pushTokens(user: "_bob", container: "c1", environment: "development") } == [])
            #expect(try !store.write { try $0.registerPushToken("b" + Self.token, user: "_bob", container: "c1", environment: "development",
                                                               at: 4, perUser: 20, maximum: 1) }, "the store is full")
        }
    }

    @Test(arguments: StoreBackend.all(for: .subscriptions))
    func aUserKeepsTheirNewestTokensWithTheirMailboxes(backend: StoreBackend) throws {
        try backend.withStore { store in
            for n in 0..<3 {
                #expect(try store.write { try $0.registerPushToken("t\(n)", user: "_ada", container: "c1", environment: "development",
                                                                  at: Int64(n), perUser: 2, maximum: 100) })
                try store.write { try $0.enqueuePushNotification("{\"n\":\(n)}", tokens: ["t\(n)"], limit: 10) }
            }
            #expect(try store.read { try $0.pushTokens(user: "_ada", container: "c1", environment: "development") } == ["t1", "t2"])
            #expect(try store.read { try $0.pushToken("t0") } == nil)
            #expect(try store.write { try $0.takePushNotifications(token: "t0", limit: 10) } == [], "its mailbox went with it")
        }
    }

    @Test(arguments: StoreBackend.all(for: .subscriptions))
    func aMailboxKeepsItsNewestAndHandsEachOutOnceOldestFirst(backend: StoreBackend) throws {
        try backend.withStore { store in
            for token in ["t1", "t2"] {
                #expect(try store.write { try $0.registerPushToken(token, user: "_ada", container: "c1", environment: "development",
                                                                  at: 1, perUser: 20, maximum: 100) })
            }
            for n in 0..<5 { try store.write { try $0.enqueuePushNotification("n\(n)", tokens: ["t1", "t2"], limit: 3) } }
            #expect(try store.read { try $0.pushToken("t1") }?.waiting == 3)
            #expect(try store.write { try $0.takePushNotifications(token: "t1", limit: 2) } == ["n2", "n3"])
            #expect(try store.write { try $0.takePushNotifications(token: "t1", limit: 2) } == ["n4"])
            #expect(try store.write { try $0.takePushNotifications(token: "t1", limit: 2) } == [])
            #expect(try store.write { try $0.takePushNotifications(token: "t2", limit: .max) } == ["n2", "n3", "n4"], "each token its own copy")
        }
    }
}
