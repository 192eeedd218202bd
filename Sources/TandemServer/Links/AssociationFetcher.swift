import Foundation
import TandemCore
import TandemLinks

/// Fetches `https://DOMAIN/.well-known/apple-app-site-association` as a device's CDN does:
/// no redirects followed, at most 128 KiB, `application/json` only (spec §2.1; decisions D25).
///
/// Runs the `curl` command (a bootstrap package) rather than linking libcurl: fetches are rare
/// (once per domain per TTL), and a child process keeps TLS, proxies and timeouts out of the
/// server's address space. `origin` replaces `https://DOMAIN` with `ORIGIN/DOMAIN` (tests
/// against a local server, or an internal mirror).
struct AssociationFetcher: Sendable {
    var origin: String?
    /// Seconds before a fetch is abandoned.
    var timeout = 10

    /// The URL fetched for `domain`.
    func url(for domain: String) -> String {
        if let origin { return "\(origin)/\(domain)/.well-known/apple-app-site-association" }
        return "https://\(domain)/.well-known/apple-app-site-association"
    }

    /// The body of the domain's file.
    /// - Throws: `AssociationFetchError` naming what was refused (a redirect, a status other
    ///   than 200, a content type other than JSON, a body over 128 KiB) or why curl failed.
    func fetch(_ domain: String) throws(AssociationFetchError) -> [UInt8] {
        let target = url(for: domain)
        let marker = "tandem-fetch:"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "--silent", "--show-error", "--max-time", String(timeout),
                             "--proto", origin == nil ? "=https" : "=https,http", "--output", "-",
                             "--write-out", "%{stderr}\n\(marker)%{http_code} %{content_type}\n", target]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { throw AssociationFetchError("cannot run curl: \(error)") }
        var body: [UInt8] = []
        var tooLarge = false
        while true {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            body += chunk
            if body.count > AssociationFile.maximumSize {
                tooLarge = true
                process.terminate()
                break
            }
        }
        let report = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if tooLarge { throw AssociationFetchError("\(target) is larger than 128 KiB (131,072 bytes); refused") }
        guard let line = report.split(separator: "\n").last(where: { $0.hasPrefix(marker) }) else {
            throw AssociationFetchError("\(target) could not be fetched: \(report.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let fields = line.dropFirst(marker.count).split(separator: " ", maxSplits: 1)
        let status = Int(fields.first ?? "") ?? 0
        let type = fields.count > 1 ? String(fields[1]).lowercased() : ""
        if process.terminationStatus != 0 && status == 0 {
            throw AssociationFetchError("\(target) could not be fetched: \(report.split(separator: "\n").first ?? "curl failed")")
        }
        if (300..<400).contains(status) {
            throw AssociationFetchError("\(target) answered \(status), a redirect; redirects are not followed")
        }
        guard status == 200 else { throw AssociationFetchError("\(target) answered \(status), not 200") }
        let base = type.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
        guard base == "application/json" else {
            throw AssociationFetchError("\(target) is served as '\(type.isEmpty ? "no content type" : type)', not application/json")
        }
        return body
    }
}

/// Why a domain's association file could not be fetched.
struct AssociationFetchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
