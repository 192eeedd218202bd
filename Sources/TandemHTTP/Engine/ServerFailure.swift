import TandemCore

/// Why a server stopped without `shutdown()`: its listening socket was lost, or lws' service
/// call failed. The first reason recorded stays.
final class ServerFailure: Sendable {
    private let value = Locked<HTTPServerError?>(nil)

    func record(_ error: HTTPServerError) {
        value.withLock { value in
            if value == nil { value = error }
        }
    }

    var error: HTTPServerError? { value.withLock { $0 } }
}
