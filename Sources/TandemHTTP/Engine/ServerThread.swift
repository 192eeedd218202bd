import Foundation

/// Marks the threads a server owns, so `shutdown()` called from inside a responder does not
/// wait for itself.
enum ServerThread {
    private static let key = "TandemHTTP.server"

    static func mark(serverID: Int) {
        Thread.current.threadDictionary[key] = serverID
    }

    static func isCurrent(serverID: Int) -> Bool {
        (Thread.current.threadDictionary[key] as? Int) == serverID
    }
}
