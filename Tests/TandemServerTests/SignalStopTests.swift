import Foundation
import Testing
import TandemTestSupport

/// `tandem serve` stops on a SIGTERM sent the moment it announces its port (decisions P51: such a
/// signal fell between `SIG_IGN` and the signal source's registration and was lost, and the
/// test that restarted its server hung).
@Suite struct SignalStopTests {
    @Test func aSIGTERMRightAfterServingOnStopsTheServer() throws {
        for attempt in 1...8 {
            let data = NSTemporaryDirectory() + "tandem-signal-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: data) }
            let server = try TandemProcess.serve(dataDirectory: data)
            server.process.terminate()
            let deadline = Date().addingTimeInterval(60)
            while server.process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            let stopped = !server.process.isRunning
            if !stopped { kill(server.process.processIdentifier, SIGKILL); server.process.waitUntilExit() }
            // The lifeline stays open until here, so only the signal can have stopped it.
            withExtendedLifetime(server.lifeline) {}
            try #require(stopped, "attempt \(attempt): still running 60 s after SIGTERM")
            #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0,
                    "attempt \(attempt): \(server.process.terminationReason) \(server.process.terminationStatus)")
        }
    }
}
