/// How a save treats the server's copy (CloudKit's `CKModifyRecordsOperation.RecordSavePolicy`),
/// and the CloudKit Web Services `operationType` each becomes — the mapping CloudKit JS uses:
///
/// | Policy | Record never saved (no change tag) | Record from the server (has a change tag) |
/// |---|---|---|
/// | `.ifServerRecordUnchanged` | `create` (exists → `serverRecordChanged`) | `update` with `recordChangeTag`, changed keys only (stale → `serverRecordChanged`) |
/// | `.changedKeys` | `forceUpdate`, changed keys | `forceUpdate`, changed keys |
/// | `.allKeys` | `forceReplace`, every key | `forceReplace`, every key (fields not sent are removed) |
///
/// Share records are always saved with `create`/`update` whatever the policy: the server
/// version-checks share saves (cloudkit.md §2.1, decisions T11). Deletions are `forceDelete`.
public enum SavePolicy: Sendable, Hashable {
    /// Refuse the save if the record changed on the server since it was fetched (the default).
    case ifServerRecordUnchanged
    /// Write the keys changed locally over whatever the server holds.
    case changedKeys
    /// Replace the server's record with this one entirely.
    case allKeys

    func operationType(hasChangeTag: Bool) -> String {
        switch self {
        case .ifServerRecordUnchanged: hasChangeTag ? "update" : "create"
        case .changedKeys: "forceUpdate"
        case .allKeys: "forceReplace"
        }
    }
}
