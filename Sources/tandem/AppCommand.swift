import Foundation
import TandemCore
import TandemServer
import TandemStore

/// `tandem app add`, `tandem app domains` and `tandem app list`: apps registered to a container
/// with their associated domains (`applinks:` entries), as the server's links/match consults them.
enum AppCommand {
    static func run(_ words: [String], options: Options, store: StoreLocation) throws -> Int32 {
        guard let container = options.value("container") else { throw UsageError("app \(words.first ?? "") needs --container ID") }
        if words[0] == "list" {
            // An unknown container is an error, as `app add` says (F43), not an empty list.
            let apps = try CommandLine.withStore(store, existing: true) { store in
                try store.read { reader in
                    guard try reader.containerExists(container) else { throw CloudKitError(.notFound, "no container '\(container)'") }
                    return try reader.apps(container: container)
                }
            }
            for app in apps {
                print(line(app))
            }
            return 0
        }
        let app = words[1]
        let stored = try CommandLine.withStore(store) { store in
            let links = LinkService(store: store)
            switch words[0] {
            case "add":
                return try links.addApp(app, container: container, domains: list(options.value("domains")))
            default:
                return try links.changeDomains(app, container: container, add: list(options.value("add")), remove: list(options.value("remove")))
            }
        }
        print(line(stored))
        return 0
    }

    /// `APPID in CONTAINER: applinks:a.com applinks:b.com`.
    private static func line(_ app: StoredApp) -> String {
        "\(app.appID) in \(app.container): \(app.domains.isEmpty ? "no associated domains" : app.domains.joined(separator: " "))"
    }

    /// `a,b` → ["a", "b"]; nil → [].
    private static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
