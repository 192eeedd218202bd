import Foundation
import TandemCore

/// A notification as CloudKit's `CKNotification` carries it: which subscription fired, the kind
/// (query, recordZone, database), the query reason, and record and zone IDs — never a record's
/// contents beyond the fields a query subscription names in `notificationInfo.additionalFields`.
struct PushNotification: Sendable, Codable {
    var notificationID = UUID.random().uuidString.lowercased()
    /// The user it is for.
    var recipient: String
    var subscriptionID: String
    /// `query`, `recordZone` or `database`.
    var kind: String
    var container: String
    var environment: String
    /// `PUBLIC`, `PRIVATE` or `SHARED`.
    var databaseScope: String
    var zoneID: ZoneID?
    var recordName: String?
    var recordType: String?
    /// `recordCreated`, `recordUpdated`, `recordDeleted` (query notifications).
    var queryReason: String?
    var notificationInfo: JSONObject?
    /// A query notification's record fields named by the subscription's
    /// `notificationInfo.additionalFields` (values as CloudKit Web Services encodes them), for
    /// created and updated records; nil otherwise.
    var fields: JSONObject?
    /// The device whose write caused it.
    var originDeviceID: String
    var webhookURL: String?
    var webhookSecret: String?
    /// Server time of the change, milliseconds since 1970.
    var timestamp: Int64

    var json: JSONValue {
        var o: JSONObject = [
            "notificationID": .string(notificationID), "subscriptionID": .string(subscriptionID),
            "notificationType": .string(kind), "containerIdentifier": .string(container), "environment": .string(environment),
            "databaseScope": .string(databaseScope), "timestamp": .int(timestamp),
        ]
        if let zoneID { o["zoneID"] = RecordCodec.encodeZoneID(zoneID) }
        if let recordName { o["recordName"] = .string(recordName) }
        if let recordType { o["recordType"] = .string(recordType) }
        if let queryReason { o["queryNotificationReason"] = .string(queryReason) }
        if let notificationInfo { o["notificationInfo"] = .object(notificationInfo) }
        if let fields { o["recordFields"] = .object(fields) }
        return .object(o)
    }
}

/// Where notifications go: stream WebSockets, long-poll mailboxes, webhooks.
protocol NotificationSink: Sendable {
    func deliver(_ notification: PushNotification)
    /// Delivered by the node that matched the notification only (webhooks: once per cluster,
    /// decisions N4), not by every node that hears it on the bus.
    var oncePerCluster: Bool { get }
}

extension NotificationSink {
    var oncePerCluster: Bool { false }
}
