import Foundation
import Synchronization
import Testing
import TandemCore

/// A parked long poll must not hold up shutdown: CloudKit JS keeps one poll parked on its
/// `webcourierURL` at all times, so every stop of a server with a web client found one waiting.
/// The bound is generous (shutdown time is behaviour here, not speed): before, SIGTERM waited
/// out the poll (10.5 s).
@Suite("Long-poll shutdown")
struct LongPollShutdownTests {
    @Test("SIGTERM with a parked long poll: the poll ends at once and the server exits cleanly within 3 s")
    func parkedPollEndsAtShutdown() throws {
        let server = try TestServer()
        let created = try server.request("POST", "\(server.baseURL)/device/1/\(TestServer.container)/development/tokens/create",
                                         body: Data(#"{"apnsEnvironment":"development"}"#.utf8))
        let courier = try #require(created.json["webcourierURL"]?.stringValue)
        let answered = Mutex<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let response = try? server.request("GET", courier + "?timeout=30", token: .some(nil))
            answered.withLock { $0 = response?.status ?? -1 }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(answered.withLock { $0 } == nil, "the poll should be parked")
        let started = Date()
        let status = server.stop()
        let elapsed = Date().timeIntervalSince(started)
        #expect(status == 0)
        #expect(elapsed < 3, "shutdown took \(elapsed) s")
        #expect(done.wait(timeout: .now() + 3) == .success)
        #expect(answered.withLock { $0 } == 204)
    }
}
