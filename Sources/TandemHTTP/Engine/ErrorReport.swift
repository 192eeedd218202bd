import Foundation
import TandemCore

/// One line to standard error for what the server cannot answer anyone about (a service loop
/// that failed or would not stop). Uses the throwing write: the older `write(_:)` traps when
/// standard error is closed or full, turning a report into a crash. Timed as the request log's
/// lines are (`LogTimestamp`).
enum ErrorReport {
    static func line(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data((LogTimestamp.now() + " TandemHTTP: " + text + "\n").utf8))
    }
}
