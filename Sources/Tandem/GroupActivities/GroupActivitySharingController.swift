internal import TandemCore

/// Starts an activity with chosen people when there is no eligible conversation (SharePlay:
/// `GroupActivitySharingController`): the server picks the conversation whose members are
/// exactly the caller and `people`, or creates it, declares it active on this device and stages
/// the activity there (its session waits for joiners).
///
/// ```swift
/// let result = try await GroupActivitySharingController(Drawing(), client: activities).share(with: [bobRecordName])
/// if case .success(let conversationID) = result { … }
/// ```
public struct GroupActivitySharingController<Activity: GroupActivity>: Sendable {
    public let activity: Activity
    let client: GroupActivities

    public init(_ activity: Activity, client: GroupActivities) {
        self.activity = activity
        self.client = client
    }

    /// SharePlay: `GroupActivitySharingResult`, with the conversation chosen.
    public enum Result: Sendable, Hashable {
        case success(conversationID: String)
        case cancelled
    }

    /// Shares with `people` (user record names). An empty list is `.cancelled` (nobody picked).
    /// - Throws: `invalidArguments` for an unknown user, `activityConflict` when that
    ///   conversation runs another activity.
    public func share(with people: [String]) async throws(TandemError) -> Result {
        guard !people.isEmpty else { return .cancelled }
        let answer: JSONValue
        do {
            answer = try await client.link.request("activity.stage", ["activity": try await ActivityWire.prepare(activity, client.link),
                                                                      "people": .array(people.map { .string($0) })])
        } catch where error.serverErrorCode == "CONFLICT" {
            throw TandemError(.activityConflict, error.message, serverErrorCode: "CONFLICT")
        }
        guard let id = answer["conversationID"]?.stringValue else { throw TandemError(.serverResponseLost, "no conversationID") }
        client.link.declareLocally(id)
        return .success(conversationID: id)
    }
}
