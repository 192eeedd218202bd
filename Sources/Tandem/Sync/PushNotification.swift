public import Foundation
internal import TandemCore

/// A change notification from the server (CloudKit's `CKNotification` family): which
/// subscription fired and what changed — never the record's contents.
public struct PushNotification: Sendable, Hashable {
    /// `CKNotification.NotificationType`.
    public enum NotificationType: String, Sendable, Hashable {
        case query, recordZone, database
    }

    /// `CKQueryNotification.Reason`.
    public enum QueryNotificationReason: String, Sendable, Hashable {
        case recordCreated, recordUpdated, recordDeleted
    }

    public var notificationID: String
    public var subscriptionID: String
    public var notificationType: NotificationType
    public var containerIdentifier: String
    public var databaseScope: Database.Scope?
    /// The zone that changed (query and zone notifications).
    public var recordZoneID: RecordZone.ID?
    /// The record that changed (query notifications).
    public var recordID: Record.ID?
    public var recordType: String?
    public var queryNotificationReason: QueryNotificationReason?
    /// When the change happened on the server.
    public var date: Date

    /// Reads the `notification` of a stream envelope; nil when it is not one.
    init?(json: JSONValue) {
        guard let id = json["notificationID"]?.stringValue, let subscription = json["subscriptionID"]?.stringValue,
              let type = json["notificationType"]?.stringValue.flatMap(NotificationType.init) else { return nil }
        notificationID = id
        subscriptionID = subscription
        notificationType = type
        containerIdentifier = json["containerIdentifier"]?.stringValue ?? ""
        databaseScope = json["databaseScope"]?.stringValue.flatMap { Database.Scope(rawValue: $0.lowercased()) }
        let scope = databaseScope ?? .private
        recordZoneID = json["zoneID"].flatMap { try? RecordCodec.decodeZoneID($0) }.map { RecordZone.ID(wire: $0, scope: scope) }
        if let name = json["recordName"]?.stringValue { recordID = Record.ID(recordName: name, zoneID: recordZoneID ?? .default) }
        recordType = json["recordType"]?.stringValue
        queryNotificationReason = json["queryNotificationReason"]?.stringValue.flatMap(QueryNotificationReason.init)
        date = FieldValues.date(json["timestamp"]?.int64Value ?? 0)
    }
}
