internal import TandemPostgres
internal import TandemStore

/// The reading and writing primitives over one PostgreSQL connection inside a transaction
/// (`read`: REPEATABLE READ READ ONLY; `write`: SERIALIZABLE).
struct PostgresStoreTransaction: StoreWriting {
    let db: PostgresConnection
    /// What this transaction logged in the change feeds (`loggedChanges`).
    let changeLog = TransactionChangeLog()
    /// A change sequence a first read took for its zone (P75), until taken.
    let reservedSequence = ReservedSequence()

    init(_ connection: PostgresConnection) { db = connection }
}

extension PostgresStoreTransaction {
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let logged = changeLog.count
        let reserved = reservedSequence.state
        do {
            return try db.transaction { _ in try body() }
        } catch {
            changeLog.truncate(to: logged)
            // The rolled-back body's reservation, or its use of one, is undone with its rows.
            reservedSequence.state = reserved
            throw error
        }
    }

    func loggedChanges() -> [LoggedChange] { changeLog.all }
}

/// The change sequence `zoneRecordAndSchemaETagReservingSequence` advanced a zone to, which
/// the transaction's first `nextChangeSequence` of that zone returns instead of advancing it
/// again (decisions P75). One transaction's, used by one thread at a time.
final class ReservedSequence {
    private var reserved: (zone: Int64, sequence: Int64)?

    /// What is reserved, to put back when a savepoint rolls back.
    var state: (zone: Int64, sequence: Int64)? {
        get { reserved }
        set { reserved = newValue }
    }

    func keep(_ sequence: Int64, zone: Int64) { reserved = (zone, sequence) }

    /// The reserved sequence of `zone`, once; nil when none is.
    func take(zone: Int64) -> Int64? {
        guard let reserved, reserved.zone == zone else { return nil }
        self.reserved = nil
        return reserved.sequence
    }
}
