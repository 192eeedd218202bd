internal import TandemHTTP

extension TandemError {
    /// What a failed stream WebSocket connect means to the app. The process's WebSocket client
    /// loop has stopped (`WebSocketError.clientStopped`: libwebsockets failed, and no stream
    /// can be opened in this process any more): `internalError`, not retried. Anything else
    /// (refused, timed out, no 101): `networkUnavailable`, which callers retry.
    static func streamConnect(_ error: any Error) -> TandemError {
        if let error = error as? TandemError { return error }
        if let error = error as? WebSocketError, error.code == .clientStopped {
            return TandemError(.internalError, "cannot open the stream: \(error.reason)")
        }
        return TandemError(.networkUnavailable, "cannot open the stream: \(error)")
    }
}
