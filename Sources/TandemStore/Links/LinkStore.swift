/// An app registered to a container with its associated domains, as stored.
public struct StoredApp: Sendable, Hashable {
    /// `TEAMID.bundle.id`.
    public var appID: String
    public var container: String
    /// Entitlement entries in the order given: `applinks:example.com`, `applinks:*.example.com`.
    public var domains: [String]
    public var createdAt: Int64

    public init(appID: String, container: String, domains: [String], createdAt: Int64) {
        self.appID = appID
        self.container = container
        self.domains = domains
        self.createdAt = createdAt
    }
}

/// A domain's apple-app-site-association file as a container holds it: uploaded by an
/// administrator, or fetched from the domain and kept until `expiresAt`.
public struct StoredAssociationFile: Sendable, Hashable {
    public enum Source: String, Sendable {
        case upload
        case fetch
    }

    public var container: String
    /// The host the file speaks for (`example.com`; also the file of `applinks:*.example.com`).
    public var domain: String
    public var body: [UInt8]
    public var source: Source
    /// Milliseconds since 1970 when it was uploaded or fetched.
    public var storedAt: Int64
    /// When a fetched file must be fetched again; nil for an upload (kept until replaced).
    public var expiresAt: Int64?
    /// Increases on every replacement, so a compiled copy knows it is stale. Set by the store.
    public var version: Int64

    public init(container: String, domain: String, body: [UInt8], source: Source, storedAt: Int64, expiresAt: Int64?, version: Int64 = 0) {
        self.container = container
        self.domain = domain
        self.body = body
        self.source = source
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.version = version
    }
}

/// Reads of apps and association files (universal links).
public protocol LinkReading {
    func app(_ appID: String, container: String) throws -> StoredApp?
    /// Every app registered to `container`, by app ID (`tandem app list`).
    func apps(container: String) throws -> [StoredApp]
    /// The stored file of `domain` without its body: enough to tell whether a compiled copy is current.
    func associationFileStamp(domain: String, container: String) throws -> (version: Int64, expiresAt: Int64?)?
    func associationFile(domain: String, container: String) throws -> StoredAssociationFile?
}

/// Writes of apps and association files, inside a transaction.
public protocol LinkWriting: LinkReading {
    /// Inserts an app, or replaces its domains when it exists.
    func putApp(_ app: StoredApp) throws
    /// Inserts or replaces the file of (container, domain); returns it with its new version.
    func putAssociationFile(_ file: StoredAssociationFile) throws -> StoredAssociationFile
}
