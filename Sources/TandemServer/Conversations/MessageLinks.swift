import Foundation
import TandemCore

/// Links of a message: found in its text, or attached explicitly with a title and image.
enum MessageLinks {
    /// At most this many links per message (text and attachments together).
    static let limit = 20
    /// Characters of a URL, a title or an image URL.
    static let urlLimit = 2048
    static let titleLimit = 1024

    struct Link: Sendable, Hashable {
        var url: String
        var host: String
        var title: String?
        var imageURL: String?
    }

    /// `http(s)://…` runs of the text up to whitespace, without trailing punctuation that ends a
    /// sentence or closes a bracket (`see https://x.com/a.` → `https://x.com/a`).
    static func extract(_ text: String) -> [String] {
        var found: [String] = []
        for word in text.split(whereSeparator: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" }) {
            let lowered = word.lowercased()
            guard let start = lowered.range(of: "https://") ?? lowered.range(of: "http://") else { continue }
            var candidate = String(word[word.index(word.startIndex, offsetBy: lowered.distance(from: lowered.startIndex, to: start.lowerBound))...])
            while let last = candidate.last, ".,;:!?)]}'".contains(last) { candidate.removeLast() }
            found.append(candidate)
        }
        return found
    }

    /// The URL with its scheme and authority lowercased (path, query and fragment kept: a
    /// universal-link rule may read them), and its host without user info or port; nil when it
    /// is not an http(s) URL with a host.
    static func normalize(_ url: String) -> (url: String, host: String)? {
        guard url.utf8.count <= urlLimit, !url.contains(where: { $0.isWhitespace }) else { return nil }
        let lowered = url.lowercased()
        let scheme = lowered.hasPrefix("https://") ? "https" : lowered.hasPrefix("http://") ? "http" : nil
        guard let scheme else { return nil }
        let afterScheme = url.dropFirst(scheme.count + 3)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.lowercased()
        let rest = afterScheme.dropFirst(authority.count)
        var host = Substring(authority)
        if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
        if !host.hasPrefix("["), let colon = host.firstIndex(of: ":") { host = host[..<colon] }
        guard !host.isEmpty else { return nil }
        return ("\(scheme)://\(authority)\(rest)", String(host))
    }
}
