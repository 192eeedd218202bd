import Foundation
import Testing
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// The stores the conformance suite runs against (issue 19 item 2; decisions P5). Every
/// conformance test takes a backend argument and speaks to it as `any Store` only, so a backend
/// passes by keeping the protocols' promises, not by sharing SQLite's tables.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// `SQLiteStore` in a fresh temporary data directory.
    case sqlite
    // The PostgreSQL store adds its case here (issue 19): a fresh database on the test peer.

    var testDescription: String { rawValue }

    /// A fresh, empty store, closed and removed when `body` returns.
    func withStore<T>(_ body: (any Store) throws -> T) throws -> T {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-conformance-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 2)
            defer { store.close() }
            return try body(store)
        }
    }
}
