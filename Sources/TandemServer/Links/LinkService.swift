public import TandemHTTP
public import TandemCore
public import TandemLinks
public import TandemStore

/// Universal links for a container: apps with their associated domains, each domain's
/// apple-app-site-association file (uploaded, or fetched and kept for a TTL), and the server's
/// answer to "does this URL open this app?".
///
/// Each file is compiled once into a `LinkMatcher` and kept in memory until its stored version
/// changes (an upload or refresh, from this process or the CLI), so a match costs one small
/// read and the matcher's own work.
public final class LinkService: Sendable {
    let store: any Store
    let fetcher: AssociationFetcher
    /// How long a fetched file is used before it is fetched again, milliseconds.
    let ttl: Int64
    private let compiled = Locked<[CacheKey: CompiledFile]>([:])

    private struct CacheKey: Hashable {
        var container: String
        var domain: String
    }

    /// A stored file compiled, or why it cannot be used.
    struct CompiledFile: Sendable {
        var file: StoredAssociationFile
        var matcher: Result<LinkMatcher, AssociationFileError>
    }

    /// - Parameters:
    ///   - ttlSeconds: how long a fetched file is used (a day by default: Apple's CDN re-fetches
    ///     within about a day).
    ///   - fetchOrigin: fetch `ORIGIN/DOMAIN/.well-known/…` instead of `https://DOMAIN/.well-known/…`
    ///     (tests against a local server, internal mirrors); also accepts `host:port` domains.
    ///   - outboundAllow: address blocks fetches may reach although the outbound-address rule
    ///     refuses them (`--webhook-allow`; an internal origin needs one).
    public init(store: any Store, ttlSeconds: Int = 86_400, fetchOrigin: String? = nil, outboundAllow: [AddressRange] = []) {
        self.store = store
        ttl = Int64(ttlSeconds) * 1000
        fetcher = AssociationFetcher(origin: fetchOrigin, rule: OutboundRule(allowed: outboundAllow))
    }

    var allowsPorts: Bool { fetcher.origin != nil }

    // MARK: Apps

    /// Registers `appID` (`TEAMID.bundle.id`) in `container` with its `applinks:` entries, or
    /// replaces the entries of an app already registered.
    /// - Throws: `BAD_REQUEST` for a malformed app ID or entry, `NOT_FOUND` for an unknown container.
    @discardableResult
    public func addApp(_ appID: String, container: String, domains: [String]) throws -> StoredApp {
        try Self.validate(appID: appID)
        let entries = try normalized(domains)
        guard try store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let app = StoredApp(appID: appID, container: container, domains: entries, createdAt: Clock.milliseconds())
        try store.write { try $0.putApp(app) }
        return try store.read { try $0.app(appID, container: container) } ?? app
    }

    /// Adds and removes `applinks:` entries of a registered app; returns the app as stored.
    @discardableResult
    public func changeDomains(_ appID: String, container: String, add: [String], remove: [String]) throws -> StoredApp {
        guard var app = try store.read({ try $0.app(appID, container: container) }) else {
            throw CloudKitError(.notFound, "no app '\(appID)' in container '\(container)' (register it with: tandem app add \(appID) --container \(container))")
        }
        let removed = Set(try normalized(remove))
        app.domains = try normalized(app.domains.filter { !removed.contains($0) } + add)
        let updated = app
        try store.write { try $0.putApp(updated) }
        return updated
    }

    /// The app as registered in `container`, if it is.
    public func app(_ appID: String, container: String) throws -> StoredApp? {
        try store.read { try $0.app(appID, container: container) }
    }

    /// Entries parsed and written canonically, duplicates dropped, order kept.
    private func normalized(_ entries: [String]) throws -> [String] {
        try entries.map { try AssociatedDomain($0, allowPorts: allowsPorts).entry }.uniqued()
    }

    /// `TEAMID.bundle.id`: a ten-character team (or app ID) prefix of capitals and digits, a
    /// dot, and a bundle identifier of letters, digits, `.` and `-`.
    static func validate(appID: String) throws {
        let parts = appID.split(separator: ".", maxSplits: 1)
        let prefixOK = parts.count == 2 && parts[0].count == 10
            && parts[0].unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
        let bundleOK = parts.count == 2 && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && parts[1].unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }
        guard prefixOK, bundleOK else {
            throw CloudKitError.badRequest("'\(appID)' is not an app ID (TEAMID.bundle.id, e.g. ABCDE12345.com.example.app)")
        }
    }

    // MARK: Files

    /// Stores an administrator's file for `domain`; it is used until replaced (no TTL).
    /// - Throws: `BAD_REQUEST` for a file over 128 KiB or one that does not parse (with its line
    ///   and column), or a malformed domain.
    @discardableResult
    public func upload(domain: String, container: String, bytes: [UInt8]) throws -> StoredAssociationFile {
        let domain = try AssociatedDomain("applinks:" + domain, allowPorts: allowsPorts).host
        do { _ = try AssociationFile.parse(bytes) } catch {
            throw CloudKitError.badRequest("the association file for \(domain) is not usable: \(error)")
        }
        guard try store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let file = StoredAssociationFile(container: container, domain: domain, body: bytes, source: .upload,
                                         storedAt: Clock.milliseconds(), expiresAt: nil)
        return try store.write { try $0.putAssociationFile(file) }
    }

    /// Fetches `domain`'s file now and stores it for the TTL, replacing what was there (an
    /// upload too).
    /// - Throws: `BAD_REQUEST` naming what the fetch refused or why the file does not parse.
    @discardableResult
    public func refresh(domain: String, container: String) throws -> StoredAssociationFile {
        let domain = try AssociatedDomain("applinks:" + domain, allowPorts: allowsPorts).host
        let bytes: [UInt8]
        do { bytes = try fetcher.fetch(domain) } catch { throw CloudKitError.badRequest(error.description) }
        do { _ = try AssociationFile.parse(bytes) } catch {
            throw CloudKitError.badRequest("\(fetcher.url(for: domain)) is not a usable association file: \(error)")
        }
        guard try store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        let now = Clock.milliseconds()
        let file = StoredAssociationFile(container: container, domain: domain, body: bytes, source: .fetch,
                                         storedAt: now, expiresAt: now + ttl)
        return try store.write { try $0.putAssociationFile(file) }
    }

    /// The file of `domain` compiled: fetched first when none is stored or a fetched one expired
    /// (an expired file is still used when the domain cannot be reached). Nil with the reason
    /// when there is no file at all.
    func compiledFile(domain: String, container: String) throws -> (CompiledFile?, reason: String?) {
        var stamp = try store.read { try $0.associationFileStamp(domain: domain, container: container) }
        var reason: String?
        if stamp == nil || (stamp?.expiresAt).map({ $0 <= Clock.milliseconds() }) == true {
            do {
                let file = try refresh(domain: domain, container: container)
                stamp = (file.version, file.expiresAt)
            } catch let error as CloudKitError {
                reason = error.reason
            }
        }
        guard let stamp else { return (nil, reason ?? "no association file for \(domain)") }
        let key = CacheKey(container: container, domain: domain)
        if let cached = compiled.withLock({ $0[key] }), cached.file.version == stamp.version { return (cached, nil) }
        guard let file = try store.read({ try $0.associationFile(domain: domain, container: container) }) else {
            return (nil, "no association file for \(domain)")
        }
        let entry = CompiledFile(file: file, matcher: Result { () throws(AssociationFileError) in try LinkMatcher(bytes: file.body) })
        compiled.withLock { $0[key] = entry }
        return (entry, nil)
    }

    // MARK: Matching

    /// What a device with only `appID` installed does with `url`: the app's associated domains
    /// covering the URL's host are consulted exactly-named host first, then wildcards from the
    /// most specific; the first file whose rules decide (open or blocked) answers.
    /// - Throws: `NOT_FOUND` for an app not registered in `container`; `BAD_REQUEST` for a URL
    ///   without a host.
    public func match(url: String, appID: String, container: String) throws -> LinkMatchResult {
        guard let app = try store.read({ try $0.app(appID, container: container) }) else {
            throw CloudKitError(.notFound, "no app '\(appID)' in container '\(container)' (register it with: tandem app add \(appID) --container \(container))")
        }
        // Universal links are http(s) URLs on the domain's default port (L3).
        let lowered = url.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://") else {
            throw CloudKitError.badRequest("'\(url)' is not an http(s) URL; universal links are https://host/path")
        }
        guard var host = LinkURL(url).host, !host.isEmpty else {
            throw CloudKitError.badRequest("'\(url)' has no host; send a full URL (https://example.com/path)")
        }
        if let at = host.lastIndex(of: "@") { host = String(host[host.index(after: at)...]) }
        if !allowsPorts, !host.hasSuffix("]"), host.contains(":") {
            throw CloudKitError.badRequest("'\(url)' names a port; universal links use the default port")
        }
        host = host.lowercased()
        let domains = app.domains.compactMap { try? AssociatedDomain($0, allowPorts: allowsPorts) }
        let candidates = AssociatedDomain.candidates(for: host, in: domains)
        guard candidates.isEmpty == false else {
            return LinkMatchResult(decision: .noMatch, reason: "\(appID) has no associated domain covering \(host)")
        }
        var first: LinkMatchResult?
        var reasons: [String] = []
        for candidate in candidates {
            let (entry, reason) = try compiledFile(domain: candidate.host, container: container)
            guard let entry else {
                reasons.append(reason ?? "")
                continue
            }
            switch entry.matcher {
            case .failure(let error):
                reasons.append("the association file of \(candidate.host) does not parse: \(error)")
            case .success(let matcher):
                let result = LinkMatchResult(decision: matcher.match(url, appID: appID), entitlement: candidate.entry, file: entry.file)
                if result.decision != .noMatch { return result }
                if first == nil { first = result }
            }
        }
        var result = first ?? LinkMatchResult(decision: .noMatch)
        if result.file == nil { result.reason = reasons.joined(separator: "; ") }
        return result
    }
}

extension LinkService {
    /// Whether each URL opens `appID` (decision `open`), for many URLs at once: the app and each
    /// domain's compiled file are read once (the highlight list matches every candidate link).
    /// An app not registered opens nothing.
    func opens(_ urls: [String], appID: String, container: String) throws -> Set<String> {
        guard let app = try store.read({ try $0.app(appID, container: container) }) else { return [] }
        let domains = app.domains.compactMap { try? AssociatedDomain($0, allowPorts: allowsPorts) }
        var files: [String: LinkMatcher?] = [:]
        var opened = Set<String>()
        for url in urls {
            guard var host = LinkURL(url).host?.lowercased(), !host.isEmpty else { continue }
            if let at = host.lastIndex(of: "@") { host = String(host[host.index(after: at)...]) }
            for candidate in AssociatedDomain.candidates(for: host, in: domains) {
                if files[candidate.host] == nil {
                    let (entry, _) = try compiledFile(domain: candidate.host, container: container)
                    files[candidate.host] = entry.flatMap { try? $0.matcher.get() }
                }
                guard let matcher = files[candidate.host] ?? nil else { continue }
                let decision = matcher.match(url, appID: appID)
                if decision == .noMatch { continue }
                if case .open = decision { opened.insert(url) }
                break
            }
        }
        return opened
    }
}

/// The server's answer for one URL and app.
public struct LinkMatchResult: Sendable {
    public var decision: LinkDecision
    /// The entitlement entry whose file answered (`applinks:*.example.com`).
    public var entitlement: String?
    /// The file consulted, without its body.
    public var file: StoredAssociationFile?
    /// Why no file could answer, when none did.
    public var reason: String?

    init(decision: LinkDecision, entitlement: String? = nil, file: StoredAssociationFile? = nil, reason: String? = nil) {
        self.decision = decision
        self.entitlement = entitlement
        self.file = file
        self.reason = reason
    }

    /// `{"decision": "open"|"blocked"|"noMatch", "rule": {"location", "text"}, "entitlement",
    /// "file": {"domain", "source", "storedAt", "expiresAt", "version"}, "reason"}`.
    public var json: JSONValue {
        var object: JSONObject = [:]
        switch decision {
        case .open: object["decision"] = "open"
        case .blocked: object["decision"] = "blocked"
        case .noMatch: object["decision"] = "noMatch"
        }
        if let rule = decision.rule { object["rule"] = .object(["location": .string(rule.location), "text": .string(rule.text)]) }
        if let entitlement { object["entitlement"] = .string(entitlement) }
        if let file {
            var described: JSONObject = ["domain": .string(file.domain), "source": .string(file.source.rawValue),
                                         "storedAt": .int(file.storedAt), "version": .int(file.version)]
            if let expires = file.expiresAt { described["expiresAt"] = .int(expires) }
            object["file"] = .object(described)
        }
        if let reason { object["reason"] = .string(reason) }
        return .object(object)
    }
}
