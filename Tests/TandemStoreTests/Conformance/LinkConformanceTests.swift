import Testing
import TandemCore
import TandemStore

/// Apps and association files through `any Store` (decisions P5).
@Suite struct LinkConformanceTests {
    @Test(arguments: StoreBackend.all(for: .links))
    func appsAndAssociationFilesReadBack(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let app = StoredApp(appID: "TEAM.com.example.notes", container: Fixture.container, domains: ["applinks:example.com"], createdAt: 2_000)
            try store.write { tx in try tx.putApp(app) }
            #expect(try store.read { try $0.app(app.appID, container: Fixture.container) } == app)
            #expect(try store.read { try $0.apps(container: Fixture.container) } == [app])
            var changed = app
            changed.domains = ["applinks:example.com", "applinks:*.example.org"]
            try store.write { [changed] tx in try tx.putApp(changed) }
            #expect(try store.read { try $0.app(app.appID, container: Fixture.container) }?.domains == changed.domains)

            let file = StoredAssociationFile(container: Fixture.container, domain: "example.com", body: Array(#"{"applinks":{}}"#.utf8),
                                             source: .upload, storedAt: 3_000, expiresAt: nil)
            let first = try store.write { tx in try tx.putAssociationFile(file) }
            var refreshed = file
            refreshed.body = Array(#"{"applinks":{"details":[]}}"#.utf8)
            refreshed.source = .fetch
            refreshed.expiresAt = 9_000
            let second = try store.write { [refreshed] tx in try tx.putAssociationFile(refreshed) }
            #expect(second.version > first.version, "every write gets a newer version")
            let read = try #require(try store.read { try $0.associationFile(domain: "example.com", container: Fixture.container) })
            #expect(read.body == refreshed.body)
            #expect(read.source == .fetch)
            let stamp = try #require(try store.read { try $0.associationFileStamp(domain: "example.com", container: Fixture.container) })
            #expect(stamp.version == second.version)
            #expect(stamp.expiresAt == 9_000)
            #expect(try store.read { try $0.associationFile(domain: "other.com", container: Fixture.container) } == nil)
        }
    }
}
