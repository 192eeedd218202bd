public import Foundation
internal import TandemCore

/// Something people do together in a conversation (SharePlay: `GroupActivity`): a `Codable`
/// value the other participants' apps receive and start the same thing from.
///
/// ```swift
/// struct Drawing: GroupActivity {
///     static let activityIdentifier = "com.example.draw"
///     var canvas: String
///     var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "Draw \(canvas)", type: .createTogether) }
/// }
/// let activities = container.groupActivities
/// try await activities.setActiveConversation(conversationID)      // the "call" (D35)
/// if await Drawing(canvas: "A").prepareForActivation(on: activities) == .activationPreferred {
///     _ = try await Drawing(canvas: "A").activate(on: activities)
/// }
/// for await session in Drawing.sessions(on: activities) { try await session.join() }
/// ```
///
/// Tandem takes the client (`container.groupActivities`) as a parameter where Apple's methods
/// take none: there is no process-wide system service (decisions G9). The activity is encoded
/// as JSON, at most 256 KiB.
public protocol GroupActivity: Codable, Sendable {
    /// Stable across app versions; reverse-DNS: 1–255 letters, digits, `.`, `-` or `_`, the first
    /// a letter or digit (C66). Default: the type's full name, which fits for a named type at
    /// module or type level (a generic or function-local type must set its own); another value
    /// fails activation with `invalidArguments` before anything is sent.
    static var activityIdentifier: String { get }
    /// Shown in invitations (`session.available`).
    var metadata: GroupActivityMetadata { get }
}

extension GroupActivity {
    public static var activityIdentifier: String { String(reflecting: Self.self) }

    /// SharePlay: `prepareForActivation()`. `.activationPreferred` when the caller is eligible
    /// (D35: a member with the conversation declared active), `.activationDisabled` otherwise
    /// (do it locally or use `GroupActivitySharingController`); `.cancelled` when the server
    /// cannot be asked.
    public func prepareForActivation(on client: GroupActivities) async -> GroupActivityActivationResult {
        do {
            return try await GroupStateObserver(client).eligibility().isEligible ? .activationPreferred : .activationDisabled
        } catch {
            return .cancelled
        }
    }

    /// SharePlay: `activate()`. Starts this activity in the active conversation; its live
    /// session of the same activity is updated instead. Returns true: the session is delivered
    /// to this app's `sessions(on:)` too.
    /// - Parameter replacingExisting: end the conversation's session of another activity (G4).
    /// - Throws: `permissionFailure` when not eligible (`reason` in the message),
    ///   `tooManyParticipants` for a conversation over the participant limit,
    ///   `activityConflict` when another activity runs and `replacingExisting` is false.
    public func activate(on client: GroupActivities, replacingExisting: Bool = false) async throws(TandemError) -> Bool {
        do {
            _ = try await client.link.request("activity.activate", ["activity": try await ActivityWire.prepare(self, client.link),
                                                                    "replace": .bool(replacingExisting)])
        } catch where error.serverErrorCode == "CONFLICT" {
            throw TandemError(.activityConflict, error.message, serverErrorCode: "CONFLICT")
        }
        return true
    }

    /// SharePlay: `sessions()`. Sessions of this activity as they become available (including
    /// the live ones when iteration starts), each in `.waiting` until `join()`.
    public static func sessions(on client: GroupActivities) -> AsyncStream<GroupSession<Self>> {
        client.link.sessions(identifier: activityIdentifier) { GroupSession<Self>(core: $0) }
    }
}

/// SharePlay: `GroupActivityActivationResult`.
public enum GroupActivityActivationResult: Sendable, Equatable {
    case activationPreferred, activationDisabled, cancelled
}

/// SharePlay: `GroupActivityMetadata`: what invitations show about an activity.
public struct GroupActivityMetadata: Codable, Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var type: ActivityType
    /// Web fallback for people without the app (http or https).
    public var fallbackURL: URL?
    public var lifetimePolicy: LifetimePolicy
    /// An image shown in invitations (PNG or JPEG bytes, at most 1 MiB), uploaded as an asset at
    /// activation; receivers load it with `GroupSession.previewImage()` (G11).
    public var previewImage: Data?

    public init(title: String? = nil, subtitle: String? = nil, type: ActivityType = .generic, fallbackURL: URL? = nil,
                lifetimePolicy: LifetimePolicy = .automatic, previewImage: Data? = nil) {
        self.previewImage = previewImage
        self.title = title
        self.subtitle = subtitle
        self.type = type
        self.fallbackURL = fallbackURL
        self.lifetimePolicy = lifetimePolicy
    }

    /// SharePlay: `GroupActivityMetadata.LifetimePolicy` (iOS 18).
    public enum LifetimePolicy: String, Codable, Sendable {
        /// The session lives while anyone is in it.
        case automatic
        /// The session ends for everyone when its initiator leaves.
        case endsWhenInitiatorLeaves
    }
}

/// SharePlay: `ActivityType`.
public enum ActivityType: String, Codable, Sendable, CaseIterable {
    case generic, watchTogether, listenTogether, createTogether, workoutTogether, shopTogether, exploreTogether,
         learnTogether, readTogether, playTogether
}
