import Foundation
import TandemCore
import TandemLinks

/// Fetches `https://DOMAIN/.well-known/apple-app-site-association` as a device's CDN does:
/// no redirects followed, at most 128 KiB, `application/json` only (spec §2.1; decisions D25).
///
/// The fetch goes through `OutboundClient`, so the domain must resolve to addresses the
/// outbound-address rule allows. `origin` replaces `https://DOMAIN` with `ORIGIN/DOMAIN`
/// (tests against a local server, or an internal mirror, which `--webhook-allow` must open).
struct AssociationFetcher: Sendable {
    var origin: String?
    var client: OutboundClient

    init(origin: String?, rule: OutboundRule) {
        self.origin = origin
        client = OutboundClient(rule: rule)
    }

    /// The URL fetched for `domain`.
    func url(for domain: String) -> String {
        if let origin { return "\(origin)/\(domain)/.well-known/apple-app-site-association" }
        return "https://\(domain)/.well-known/apple-app-site-association"
    }

    /// The body of the domain's file.
    /// - Throws: `AssociationFetchError` naming what was refused (an address the outbound
    ///   rule refuses, a redirect, a status other than 200, a content type other than JSON, a
    ///   body over 128 KiB) or why the fetch failed.
    func fetch(_ domain: String) throws(AssociationFetchError) -> [UInt8] {
        let target = url(for: domain)
        let response: OutboundClient.Response
        do {
            response = try client.perform(OutboundClient.Request(url: target, maximumResponseBytes: AssociationFile.maximumSize))
        } catch .failed(let reason) where reason.hasSuffix("; abandoned") {
            throw AssociationFetchError("\(target) is larger than 128 KiB (131,072 bytes); refused")
        } catch {
            throw AssociationFetchError(error.description)
        }
        let status = response.status
        if (300..<400).contains(status) {
            throw AssociationFetchError("\(target) answered \(status), a redirect; redirects are not followed")
        }
        guard status == 200 else { throw AssociationFetchError("\(target) answered \(status), not 200") }
        let type = response.contentType
        let base = type.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
        guard base == "application/json" else {
            throw AssociationFetchError("\(target) is served as '\(type.isEmpty ? "no content type" : type)', not application/json")
        }
        return response.body
    }
}

/// Why a domain's association file could not be fetched.
struct AssociationFetchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
