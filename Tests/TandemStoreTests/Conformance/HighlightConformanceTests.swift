import Testing
import TandemCore
import TandemStore

/// A viewer's highlight state through `any Store` (decisions P5): consent switches, hidden URLs,
/// interaction scores and their purge.
@Suite struct HighlightConformanceTests {
    @Test(arguments: StoreBackend.all(for: .highlights))
    func consentHiddenURLsAndInteractions(backend: StoreBackend) throws {
        try backend.withStore { store in
            let viewer = try Fixture.make(store).owner.recordName
            try store.write { tx in
                try tx.setConsent(viewer: viewer, StoredConsent(scope: .global, target: "", allowed: true))
                try tx.setConsent(viewer: viewer, StoredConsent(scope: .app, target: "TEAM.app", allowed: false))
                try tx.setConsent(viewer: viewer, StoredConsent(scope: .global, target: "", allowed: false))
                try tx.hide(viewer: viewer, url: "https://example.com/hidden", at: 1_000)
                try tx.addInteraction(viewer: viewer, url: "https://example.com/a", weight: 2, at: 1_000)
                try tx.addInteraction(viewer: viewer, url: "https://example.com/a", weight: 3, at: 5_000)
                try tx.addInteraction(viewer: viewer, url: "https://example.com/b", weight: 1, at: 6_000)
            }
            try store.read { reader throws -> Void in
                let consent = try reader.consent(viewer: viewer)
                #expect(Set(consent) == [StoredConsent(scope: .global, target: "", allowed: false),
                                         StoredConsent(scope: .app, target: "TEAM.app", allowed: false)])
                #expect(try reader.hiddenURLs(viewer: viewer) == ["https://example.com/hidden"])
                #expect(try reader.interactionScores(viewer: viewer, since: 0) == ["https://example.com/a": 5, "https://example.com/b": 1])
                #expect(try reader.interactionScores(viewer: viewer, since: 5_500) == ["https://example.com/b": 1])
                #expect(try reader.hiddenURLs(viewer: "_someone-else").isEmpty)
            }
            try store.write { tx in try tx.purgeInteractions(before: 5_500) }
            #expect(try store.read { try $0.interactionScores(viewer: viewer, since: 0) } == ["https://example.com/b": 1])
        }
    }
}
