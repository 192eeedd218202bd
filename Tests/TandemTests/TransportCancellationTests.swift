import Foundation
import Testing
import Tandem
import TandemTestSupport

/// Cancelling a request right around the moment its answer arrives. FoundationNetworking traps
/// ("Trying to access a behaviour for a task that in not in the registry") when
/// `URLSessionTask.cancel()` reaches a task whose answer is arriving (seen once in CI). Before
/// decisions F37 this test's child process died of that trap within a second on every run.
@Suite struct TransportCancellationTests {
    /// Runs in a child process (an exit test): the fault it guards against is a trap, which would
    /// end every other test of the process with it.
    @Test func cancellingRequestsAsTheyCompleteNeverCrashes() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let db = TestServer.shared.ada.privateDatabase
            // How long one request takes here, so cancellations land before, during and after it.
            var durations: [UInt64] = []
            for _ in 0..<20 {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try await db.allRecordZones()
                durations.append(DispatchTime.now().uptimeNanoseconds - start)
            }
            let typical = max(durations.sorted()[durations.count / 2], 100_000)
            var completed = 0
            var cancelled = 0
            for _ in 0..<150 {
                let outcomes = await withTaskGroup(of: TandemError.Code?.self) { group in
                    for _ in 0..<16 {
                        let request = Task { () -> TandemError.Code? in
                            do throws(TandemError) { _ = try await db.allRecordZones(); return nil } catch { return error.code }
                        }
                        group.addTask {
                            try? await Task.sleep(nanoseconds: UInt64.random(in: typical / 2...typical * 2))
                            request.cancel()
                            return await request.value
                        }
                    }
                    return await group.reduce(into: [TandemError.Code?]()) { $0.append($1) }
                }
                for outcome in outcomes {
                    if let outcome { #expect(outcome == .operationCancelled); cancelled += 1 } else { completed += 1 }
                }
            }
            // Both sides of the race were exercised, and the session still works.
            #expect(completed > 0)
            #expect(cancelled > 0)
            _ = try await db.allRecordZones()
        }
        if let result, result.exitStatus != .exitCode(EXIT_SUCCESS) {
            Issue.record("the child process's last words: \(String(decoding: result.standardErrorContent.suffix(2000), as: UTF8.self))")
        }
    }
}
