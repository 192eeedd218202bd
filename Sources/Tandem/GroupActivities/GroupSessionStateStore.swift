import Foundation
internal import TandemCore
import Synchronization

/// Per-session keys holding the latest value, for late joiners (a Tandem addition, decisions
/// D36, G8): a joiner receives every key with its `join()`; later changes arrive as updates.
///
/// ```swift
/// try await session.stateStore.set(canvas, forKey: "canvas")
/// let canvas = session.stateStore.value(forKey: "canvas", as: Canvas.self)
/// ```
///
/// Values are JSON-encoded, at most 256 KiB; at most 1,000 keys per session.
public struct GroupSessionStateStore: Sendable {
    let core: SessionCore

    /// Sets `key` for everyone. Throws `messageTooLarge`, `limitExceeded`, or `unknownItem` when not joined.
    public func set<T: Encodable>(_ value: T, forKey key: String) async throws(TandemError) {
        let data: Data
        do { data = try JSONEncoder().encode(value) } catch { throw TandemError(.invalidArguments, "cannot encode: \(error)") }
        let text = String(decoding: data, as: UTF8.self)
        _ = try await core.link.request("session.state.set", ["sessionID": .string(core.id.uuidString), "key": .string(key),
                                                              "value": .string(text)])
        core.storeChanged(key, text)
    }

    /// Removes `key` for everyone.
    public func removeValue(forKey key: String) async throws(TandemError) {
        _ = try await core.link.request("session.state.set", ["sessionID": .string(core.id.uuidString), "key": .string(key),
                                                              "value": ""])
        core.storeChanged(key, "")
    }

    /// The latest value of `key`, decoded; nil when absent or not decodable as `T`.
    public func value<T: Decodable>(forKey key: String, as type: T.Type) -> T? {
        guard let text = core.state.withLock({ $0.store[key] }) else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    public var keys: [String] { core.state.withLock { $0.store.keys.sorted() } }

    /// Keys changed by other participants (`nil` value: removed).
    public func updates() -> AsyncStream<String> {
        let source = core.storeChanges.stream(initial: nil)
        return AsyncStream { continuation in
            let task = Task {
                for await change in source { continuation.yield(change.key) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
