import Foundation
import Testing
import TandemTestSupport

/// `tandem serve` stops on a SIGTERM sent the moment it announces its port (decisions P51: such a
/// signal fell between `SIG_IGN` and the signal source's registration and was lost, and the
/// test that restarted its server hung), and with `--stop-on-stdin-eof` on a standard input that
/// is closed from the start (decisions E30: it stopped the server before it started, and the
/// start then failed with exit status 1).
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
            if !stopped { kill(server.process.processIdentifier, SIGKILL); server.process.waitForTermination() }
            // The lifeline stays open until here, so only the signal can have stopped it.
            withExtendedLifetime(server.lifeline) {}
            try #require(stopped, "attempt \(attempt): still running 60 s after SIGTERM")
            #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0,
                    "attempt \(attempt): \(server.process.terminationReason) \(server.process.terminationStatus)")
        }
    }

    @Test func aStandardInputClosedFromTheStartStopsTheServerOnceItServed() throws {
        let data = NSTemporaryDirectory() + "tandem-stdin-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        // runTandem's standard input is /dev/null: end of file at the first read.
        let result = try runTandem(["serve", "--port", "0", "--data", data, "--stop-on-stdin-eof"], timeout: 60)
        #expect(result.status == 0, "\(result.error.prefix(600))")
        #expect(result.error.contains("tandem serving on") && result.error.contains("tandem stopped"), "\(result.error.prefix(600))")
    }
}
