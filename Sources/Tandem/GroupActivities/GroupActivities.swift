import Foundation
internal import TandemCore

/// Group activities of one container and user (SharePlay's system side): declares which
/// conversation is active on this device (the FaceTime call's role, D35) and carries every
/// session over one stream WebSocket. Get it from `container.groupActivities`.
///
/// ```swift
/// let activities = container.groupActivities
/// try await activities.setActiveConversation(conversationID)
/// let observer = GroupStateObserver(activities)
/// if try await observer.eligibility().isEligible { _ = try await Drawing().activate(on: activities) }
/// ```
public final class GroupActivities: Sendable {
    let link: SessionLink

    init(transport: Transport) { link = SessionLink(transport: transport) }

    /// Declares `conversationID` active on this device (D35): eligibility and `activate()`
    /// without a conversation use the latest one declared. Re-declared after a reconnect.
    public func setActiveConversation(_ conversationID: String) async throws(TandemError) {
        try await link.declare(conversationID, active: true)
    }

    /// Withdraws a declaration.
    public func clearActiveConversation(_ conversationID: String) async throws(TandemError) {
        try await link.declare(conversationID, active: false)
    }

    /// Starts `activity` in a given conversation (rather than the latest declared).
    /// - Throws: as `GroupActivity.activate(on:replacingExisting:)`.
    public func activate<Activity: GroupActivity>(_ activity: Activity, in conversationID: String,
                                                  replacingExisting: Bool = false) async throws(TandemError) {
        do {
            _ = try await link.request("activity.activate", ["activity": try await ActivityWire.prepare(activity, link),
                                                             "conversationID": .string(conversationID),
                                                             "replace": .bool(replacingExisting)])
        } catch where error.serverErrorCode == "CONFLICT" {
            throw TandemError(.activityConflict, error.message, serverErrorCode: "CONFLICT")
        }
    }
}

extension Container {
    /// This container's group activities (one per container).
    public var groupActivities: GroupActivities { groupActivitiesClient }
}
