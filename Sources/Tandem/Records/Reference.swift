/// A link from one record to another (CloudKit's `CKRecord.Reference`), stored in a field or
/// used as a record's `parent`.
///
/// CloudKit Web Services: Reference dictionary (`recordName`, `zoneID`, `action`). A reference
/// points into the same zone as the record that holds it.
public struct Reference: Sendable, Hashable {
    /// What happens to the record holding the reference when its target is deleted.
    public enum Action: String, Sendable, Hashable {
        /// Nothing (`CKRecord.ReferenceAction.none`).
        case none = "NONE"
        /// Deleting the target deletes the record holding the reference (`.deleteSelf`).
        case deleteSelf = "DELETE_SELF"
        /// Tandem and Web Services: the target must exist when saved and cannot be deleted while referenced.
        case validate = "VALIDATE"
    }

    public var recordID: Record.ID
    public var action: Action

    public init(recordID: Record.ID, action: Action = .none) {
        self.recordID = recordID
        self.action = action
    }

    public init(record: Record, action: Action = .none) {
        self.init(recordID: record.recordID, action: action)
    }
}
