import TandemCore

extension Credentials {
    /// The token that names a user: a user token, or the web auth token beside an API token.
    var userToken: String? {
        switch self {
        case .userToken(let token): token
        case .apiToken(_, let web): web
        case .none: nil
        }
    }

    /// The API token (`ckAPIToken`), when the credentials carry one.
    var apiTokenValue: String? {
        if case .apiToken(let api, _) = self { return api }
        return nil
    }

    /// The same credentials without a user: the API token alone, or none.
    var signedOut: Credentials {
        if case .apiToken(let api, _) = self { return .apiToken(api, webAuthToken: nil) }
        return .none
    }
}

/// A container's credentials and who they name: the one place they change (the app's
/// `replaceCredentials`, `signIn`/`signOut`, a rotated token, a refused session), so each change
/// is told once, in order, to `Configuration.credentialsChanged` (when the container itself chose
/// the new credentials) and to `accountChanges` subscribers (when the person changed); decisions A36.
final class AccountTracker: Sendable {
    private struct State {
        var credentials: Credentials
        /// Bumped by every change but a rotation; answers about older credentials are ignored.
        var generation = 0
        /// The user the live session names, when known (nil after sign-out or a session's end).
        var user: String?
        /// After a change whose user is not known yet: the user before it, until `users/current` names the new one.
        var pendingFrom: String??
        /// `sessionEnded` was told for this generation.
        var ended = false
        var subscribers: [Int: AsyncStream<AccountChange>.Continuation] = [:]
        var nextSubscriber = 0

        mutating func tell(_ change: AccountChange?) {
            guard let change else { return }
            for continuation in subscribers.values { continuation.yield(change) }
        }

        /// The change from `previous` to `user`: signedIn, switched, or nothing for the same person.
        static func change(from previous: String?, to user: String) -> AccountChange? {
            guard let previous else { return .signedIn(Record.ID(recordName: user)) }
            return previous == user ? nil : .switched(from: Record.ID(recordName: previous), to: Record.ID(recordName: user))
        }
    }

    private let state: Locked<State>
    private let credentialsChanged: (@Sendable (Credentials) -> Void)?

    init(credentials: Credentials, credentialsChanged: (@Sendable (Credentials) -> Void)?) {
        state = Locked(State(credentials: credentials))
        self.credentialsChanged = credentialsChanged
    }

    var credentials: Credentials { state.withLock { $0.credentials } }

    /// The credentials and their generation, read together (for answers that name the user).
    var snapshot: (credentials: Credentials, generation: Int) { state.withLock { ($0.credentials, $0.generation) } }

    /// A new subscriber to every later change.
    func changes() -> AsyncStream<AccountChange> {
        let (stream, continuation) = AsyncStream<AccountChange>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// New credentials. `user` is who they name when known (a sign-in's answer); otherwise a token
    /// names someone not yet known and the caller asks `users/current` (then `learned`). With
    /// `byContainer` the container chose them (sign-in, sign-out) and `credentialsChanged` hears.
    /// - Returns: the new generation, and whether the user must be looked up.
    @discardableResult
    func replace(_ credentials: Credentials, user: String?, byContainer: Bool) -> (generation: Int, needsLookup: Bool) {
        let result = state.withLock { state -> (Int, Bool) in
            let hadUser = state.credentials.userToken != nil
            let previous = state.pendingFrom ?? state.user
            state.credentials = credentials
            state.generation += 1
            state.ended = false
            state.pendingFrom = nil
            state.user = nil
            if credentials.userToken == nil {
                if hadUser { state.tell(.signedOut) }
                return (state.generation, false)
            }
            if let user {
                state.user = user
                state.tell(State.change(from: previous, to: user))
                return (state.generation, false)
            }
            state.pendingFrom = .some(previous)
            return (state.generation, true)
        }
        if byContainer { credentialsChanged?(credentials) }
        return result
    }

    /// `users/current` named `user` for the credentials of `generation`.
    func learned(user: String, generation: Int) {
        state.withLock { state in
            guard state.generation == generation, !state.ended else { return }
            if let previous = state.pendingFrom {
                state.pendingFrom = nil
                state.user = user
                state.tell(State.change(from: previous, to: user))
            } else if state.user == nil {
                state.user = user   // the credentials the container started with: no change
            }
        }
    }

    /// The server refused the session of `presented` (decisions A12): told once, when it is still
    /// the current user token.
    func sessionRefused(_ reason: AccountChange.SessionEndReason, presented: String) {
        state.withLock { state in
            guard state.credentials.userToken == presented, !state.ended else { return }
            state.ended = true
            state.user = nil
            state.pendingFrom = nil
            state.tell(.sessionEnded(reason: reason))
        }
    }

    /// The rotated web auth token of a response (`X-Apple-CloudKit-Web-Auth-Token`, decisions
    /// A13) replaces the token `presented` in the current credentials; a token replaced meanwhile
    /// (by another response or the app) is left alone. Same person: no account change, but
    /// `credentialsChanged` hears so the app saves the new token.
    func adoptRotatedToken(_ rotated: String, presented: String) {
        let adopted: Credentials? = state.withLock { state in
            switch state.credentials {
            case .userToken(let token) where token == presented: state.credentials = .userToken(rotated)
            case .apiToken(let api, let web?) where web == presented: state.credentials = .apiToken(api, webAuthToken: rotated)
            default: return nil
            }
            return state.credentials
        }
        if let adopted { credentialsChanged?(adopted) }
    }
}
