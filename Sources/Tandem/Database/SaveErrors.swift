internal import TandemCore

/// The SDK's words for the record-save errors whose server reason names wire operations
/// (`create`, `update`, `recordChangeTag`): what to do with the `Record`, in the terms of
/// `SavePolicy` and `serverRecord` (decisions F35). The server's code stays in `serverErrorCode`.
enum SaveErrors {
    /// `error` as the per-item failure of saving `record`.
    static func inSDKTerms(_ error: TandemError, saving record: Record) -> TandemError {
        guard error.code == .serverRecordChanged, let code = error.serverErrorCode else { return error }
        let name = record.recordID.recordName
        var error = error
        switch (code, record.recordType == Share.recordType) {
        case ("EXISTS", true):
            error.message = "share '\(name)' already exists on the server (a zone has at most one zone-wide share), "
                + "and this copy was never saved: make your changes on Share(error.serverRecord!) and save that"
        case ("EXISTS", false):
            error.message = "record '\(name)' already exists on the server, and this copy was never saved or fetched, "
                + "so savePolicy .ifServerRecordUnchanged refuses it: set your fields on error.serverRecord (the server's copy) "
                + "and save that, or save with savePolicy .changedKeys (write these fields over it) or .allKeys (replace it)"
        case ("CONFLICT", true):
            error.message = "share '\(name)' changed on the server since this copy was fetched: make your changes on "
                + "Share(error.serverRecord!) and save that (shares are always version-checked, whatever the savePolicy)"
        case ("CONFLICT", false):
            error.message = "record '\(name)' changed on the server since this copy was fetched, so savePolicy "
                + ".ifServerRecordUnchanged refuses it: merge your fields into error.serverRecord (the server's copy) and "
                + "save that, or save with savePolicy .changedKeys (write these fields over it) or .allKeys (replace it)"
        default:
            return error
        }
        return error
    }
}
