/// A connection's `sqlite3 *`, shared with its statements so that they know when it closed.
///
/// `sqlite3_close_v2` keeps a connection with live statements around as a "zombie" that
/// would still run them; statements check ``isOpen`` before stepping instead. The pointer
/// stays valid for `sqlite3_errmsg` as long as any statement holds this object.
final class SQLiteConnectionHandle {
    let pointer: OpaquePointer
    var isOpen = true
    /// ``SQLiteConnection/refusesTextWithNUL``, read by the statements when they bind.
    var refusesTextWithNUL = false

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }
}
