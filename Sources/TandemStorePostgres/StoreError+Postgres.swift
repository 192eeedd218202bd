public import TandemPostgres
public import TandemStore

extension StoreError {
    /// PostgreSQL's error as the store-level error (decisions P2, P22): serialization failures,
    /// deadlocks and `55P03` are retryable (after a second); class 23 a conflict; an unreachable
    /// or restarting server, an exhausted pool and a statement past its timeout unavailable
    /// (after 5 s); `53100`/`53200` full; `22021` (a NUL, or bytes that are not UTF-8) and
    /// `22P05` (untranslatable) invalid text (P62); the rest internal.
    public init(_ error: PostgresError) {
        let state = error.sqlState ?? ""
        switch error.kind {
        case .retryable: self.init(.retryable, error.description, retryAfterSeconds: 1)
        case .unavailable, .timedOut: self.init(.unavailable, error.description, retryAfterSeconds: 5)
        case .full: self.init(.full, error.description)
        case _ where state == "55P03": self.init(.retryable, error.description, retryAfterSeconds: 1)
        case _ where state == "53200": self.init(.full, error.description)
        case .conflict: self.init(.conflict, error.description)
        case _ where state.hasPrefix("23"): self.init(.conflict, error.description)
        case _ where state == "22021" || state == "22P05": self.init(.invalidText, error.description)
        default: self.init(.internal, error.description)
        }
    }

    /// The refusal of a requirement the PostgreSQL store does not implement yet (issue 19 item 3).
    static func notYetOnPostgres(_ method: String) -> StoreError {
        StoreError(.internal, "not yet on PostgreSQL: \(method)")
    }
}
