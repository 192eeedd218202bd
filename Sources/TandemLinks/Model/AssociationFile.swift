public import TandemCore

/// An apple-app-site-association file as a domain publishes it at
/// `https://DOMAIN/.well-known/apple-app-site-association`.
///
/// Shape: a JSON object with the sections `applinks` (universal links, the only one Tandem
/// matches), and `webcredentials`, `appclips`, `activitycontinuation`, kept as data.
/// Build one with `AssociationFile.parse(_:)`; compile it with `LinkMatcher` to match URLs.
/// Rules: spec/sharedwithyou-shareplay.md §2.2.
public struct AssociationFile: Sendable, Hashable {
    /// The largest file accepted, uncompressed: 128 KiB (spec §2.1; decisions D25).
    public static let maximumSize = 128 * 1024

    /// The `applinks` section; nil when the file has none (then no URL opens an app).
    public var applinks: AppLinks?
    /// `webcredentials`: app IDs that may use the domain's saved passwords.
    public var webcredentials: ServiceSection?
    /// `appclips`: only an `apps` array is supported by Apple; anything else is kept as is.
    public var appclips: ServiceSection?
    /// `activitycontinuation`: app IDs allowed to continue Handoff activities from the domain.
    public var activitycontinuation: ServiceSection?

    public init(applinks: AppLinks? = nil, webcredentials: ServiceSection? = nil,
                appclips: ServiceSection? = nil, activitycontinuation: ServiceSection? = nil) {
        self.applinks = applinks
        self.webcredentials = webcredentials
        self.appclips = appclips
        self.activitycontinuation = activitycontinuation
    }
}

/// A section other than `applinks`, kept as data: its `apps` array and the section as written.
public struct ServiceSection: Sendable, Hashable {
    /// The `apps` array's strings (app IDs); empty when absent or not an array of strings.
    public var apps: [String]
    /// The whole section as it was in the file.
    public var json: JSONValue

    public init(apps: [String], json: JSONValue) {
        self.apps = apps
        self.json = json
    }
}
