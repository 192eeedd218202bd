import Foundation
import TandemLinks
import TandemHTTP
import TandemServer
import TandemStore

/// `tandem links check` and `tandem links lint`: an association file on disk, judged by
/// TandemLinks exactly as the server judges it.
enum LinksCommand {
    /// Prints one line per URL: `open`, `blocked` or `no match`, the URL, then the deciding
    /// rule. A file that cannot be used prints its error (line and column, or JSON path) on
    /// standard error and returns 1.
    static func check(path: String, appID: String, urls: [String]) throws -> Int32 {
        let matcher: LinkMatcher
        do {
            matcher = try LinkMatcher(bytes: try readFile(path))
        } catch let error as AssociationFileError {
            CommandLine.fail("\(path): \(error)")
            return 1
        }
        if !matcher.appIDs.contains(appID) {
            CommandLine.fail("note: \(path) has no applinks entry for \(appID) (it names \(matcher.appIDs.isEmpty ? "no app" : matcher.appIDs.joined(separator: ", ")))")
        }
        for url in urls {
            let decision = matcher.match(url, appID: appID)
            switch decision {
            case .open(let rule): print("open  \(url)  \(rule)")
            case .blocked(let rule): print("blocked  \(url)  \(rule)")
            case .noMatch: print("no match  \(url)")
            }
        }
        return 0
    }

    /// Prints every finding (`error …` / `warning …` with its position); returns 1 when there
    /// is an error, 0 otherwise.
    static func lint(path: String) throws -> Int32 {
        let findings = Linter.lint(try readFile(path))
        if findings.isEmpty { print("\(path): no findings") }
        for finding in findings { print("\(path): \(finding)") }
        return findings.contains { $0.severity == .error } ? 1 : 0
    }

}

/// `tandem links upload` and `tandem links refresh`: a domain's file as a container stores it.
extension LinksCommand {
    /// Stores `path` as the file of `domain` in `container`; prints what was stored.
    static func upload(domain: String, path: String, container: String, store: StoreLocation) throws -> Int32 {
        let bytes = try readFile(path)
        let file = try CommandLine.withStore(store) { try LinkService(store: $0).upload(domain: domain, container: container, bytes: bytes) }
        print("uploaded \(file.domain) for \(container): \(file.body.count) bytes, version \(file.version)")
        return 0
    }

    /// Fetches the file of `domain` now (`fetchOrigin` and `outboundAllow` as `tandem serve
    /// --links-fetch-origin` and `--webhook-allow`).
    static func refresh(domain: String, container: String, ttl: Int, fetchOrigin: String?, outboundAllow: [AddressRange],
                        store: StoreLocation) throws -> Int32 {
        let file = try CommandLine.withStore(store) {
            try LinkService(store: $0, ttlSeconds: ttl, fetchOrigin: fetchOrigin, outboundAllow: outboundAllow)
                .refresh(domain: domain, container: container)
        }
        print("fetched \(file.domain) for \(container): \(file.body.count) bytes, version \(file.version), kept \(ttl) s")
        return 0
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        return Array(data)
    }
}
