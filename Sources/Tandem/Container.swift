public import Foundation
internal import TandemCore

/// One app's data on a Tandem server (CloudKit's `CKContainer`): three databases, the signed-in
/// user, share acceptance and push notifications.
///
/// ```swift
/// let container = Container(identifier: "iCloud.com.example.notes", environment: .development,
///                           serverURL: URL(string: "http://127.0.0.1:8080")!,
///                           credentials: .userToken(token))
/// let me = try await container.userRecordID()
/// var note = Record(recordType: "Note")
/// note["title"] = "Hello"
/// try await container.privateDatabase.save(note)
/// ```
///
/// Thread-safe; share one per server and user. CloudKit Web Services paths:
/// `/database/1/{identifier}/{environment}/{public|private|shared}/...`.
public final class Container: Sendable {
    /// `development` or `production` (CloudKit's container environments).
    public enum Environment: String, Sendable, Hashable {
        case development, production
    }

    /// Behaviour shared by every request of a container.
    public struct Configuration: Sendable {
        /// Names this device on writes (the `deviceID` query parameter, `created.deviceID`) and on
        /// the stream; with `notifyOwnChanges` false the stream is not told of this device's writes
        /// (decisions S11).
        public var deviceID: String?
        /// When false and `deviceID` is set, `notifications` skips changes this device made.
        public var notifyOwnChanges: Bool
        public var retryPolicy: RetryPolicy
        /// Seconds before one HTTP request is given up (then retried as a `networkFailure`).
        public var requestTimeout: Double
        /// Stream reconnection: waits grow from `initialDelay` by `multiplier` up to `maximumDelay`;
        /// `maximumAttempts` is ignored (the stream reconnects until the sequence is dropped).
        public var streamReconnection: RetryPolicy
        /// Called with the new credentials whenever the container chose them itself: it adopted a
        /// rotated web auth token from a response's `X-Apple-CloudKit-Web-Auth-Token` header
        /// (decisions A13; the old token stops working a minute later), `signIn` succeeded, or
        /// `signOut` dropped the user (decisions A36). Not called for `replaceCredentials` (the app
        /// chose those). Runs on the thread that read the response; save the credentials where
        /// the app keeps its session. Who is signed in: `Container.accountChanges`.
        public var credentialsChanged: (@Sendable (Credentials) -> Void)?

        public init(deviceID: String? = nil, notifyOwnChanges: Bool = true, retryPolicy: RetryPolicy = RetryPolicy(),
                    requestTimeout: Double = 60, streamReconnection: RetryPolicy = RetryPolicy(initialDelay: 0.25, maximumDelay: 30),
                    credentialsChanged: (@Sendable (Credentials) -> Void)? = nil) {
            self.credentialsChanged = credentialsChanged
            self.deviceID = deviceID
            self.notifyOwnChanges = notifyOwnChanges
            self.retryPolicy = retryPolicy
            self.requestTimeout = requestTimeout
            self.streamReconnection = streamReconnection
        }
    }

    /// The container's identifier, e.g. `iCloud.com.example.notes`.
    public let containerIdentifier: String
    public let environment: Environment
    /// The server's base URL.
    public let serverURL: URL
    /// Device ID, retries and stream reconnection for every request of this container.
    public var configuration: Configuration { transport.configuration }
    let transport: Transport
    let groupActivitiesClient: GroupActivities

    /// - Parameters:
    ///   - identifier: the container, e.g. `iCloud.com.example.notes` (`tandem container create`).
    ///   - serverURL: the server's base URL, `http://host:port`.
    ///   - credentials: who is signed in; `.none` reaches only the public database's readable records.
    public init(identifier: String, environment: Environment = .development, serverURL: URL, credentials: Credentials,
                configuration: Configuration = Configuration()) {
        containerIdentifier = identifier
        self.environment = environment
        self.serverURL = serverURL
        transport = Transport(serverURL: serverURL, containerIdentifier: identifier, environment: environment,
                              credentials: credentials, configuration: configuration)
        groupActivitiesClient = GroupActivities(transport: transport)
    }

    /// Who requests are signed in as now. Starts as the `credentials` given to `init`; a
    /// response carrying `X-Apple-CloudKit-Web-Auth-Token` (the server rotated the web auth
    /// token, decisions A13) replaces the token in it, as CloudKit JS replaces its session, and
    /// calls `Configuration.credentialsChanged`.
    public var credentials: Credentials { transport.credentials }

    /// Signs every later request (and stream connection) with `credentials`, e.g. after the
    /// person signed in again following `sessionExpired`. Requests already sent keep theirs.
    /// `accountChanges` tells `signedOut` when the new credentials name no user; otherwise the
    /// container asks `users/current` in the background and tells `signedIn` or `switched` once
    /// it answers (nothing for the same person, or when the token is refused).
    public func replaceCredentials(_ credentials: Credentials) {
        transport.replaceCredentials(credentials)
    }

    /// The signed-in user's own records (`CKContainer.privateCloudDatabase`).
    public var privateDatabase: Database { Database(scope: .private, transport: transport) }
    /// Other people's zones shared with the signed-in user (`sharedCloudDatabase`).
    public var sharedDatabase: Database { Database(scope: .shared, transport: transport) }
    /// Records everyone using the app can reach, governed by the schema's grants (`publicCloudDatabase`).
    public var publicDatabase: Database { Database(scope: .public, transport: transport) }

    /// The signed-in user's user record ID (`CKContainer.userRecordID()`); CloudKit Web Services
    /// `users/current`. Throws `notAuthenticated` without a valid user.
    public func userRecordID() async throws(TandemError) -> Record.ID {
        Record.ID(recordName: try await transport.currentUserRecordName())
    }

    /// Writes a fetched asset's bytes to a local file (replacing it). Throws `assetNotAvailable`
    /// when the asset has no `downloadURL`, or the server's error.
    public func download(_ asset: Asset, to destination: URL) async throws(TandemError) {
        guard let url = asset.downloadURL else { throw TandemError(.assetNotAvailable, "the asset has no downloadURL (fetch the record first)") }
        let data = try await transport.send(url, method: "GET", body: nil, contentType: "")
        do { try data.write(to: destination, options: .atomic) } catch {
            throw TandemError(.internalError, "cannot write \(destination.path): \(error)")
        }
    }
}
