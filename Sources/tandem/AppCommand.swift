import Foundation
import TandemServer
import TandemStore

/// `tandem app add` and `tandem app domains`: apps registered to a container with their
/// associated domains (`applinks:` entries), as the server's links/match consults them.
enum AppCommand {
    static func run(_ words: [String], options: Options, data: String) throws -> Int32 {
        guard let container = options.value("container") else { throw UsageError("app \(words.first ?? "") needs --container ID") }
        let app = words[1]
        let stored = try CommandLine.withStore(data) { store in
            let links = LinkService(store: store)
            switch words[0] {
            case "add":
                return try links.addApp(app, container: container, domains: list(options.value("domains")))
            default:
                return try links.changeDomains(app, container: container, add: list(options.value("add")), remove: list(options.value("remove")))
            }
        }
        print("\(stored.appID) in \(stored.container): \(stored.domains.isEmpty ? "no associated domains" : stored.domains.joined(separator: " "))")
        return 0
    }

    /// `a,b` → ["a", "b"]; nil → [].
    private static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
