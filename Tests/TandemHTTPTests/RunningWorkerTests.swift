import Foundation
import FoundationNetworking
import Testing
import TandemHTTP

extension EndToEndTests {
    /// The running-worker limit (`HTTPServerConfiguration.runningWorkerLimit`, decisions E28):
    /// brief requests wait for a running worker, other requests do not, and a blocked worker
    /// stops counting as running once its request has run `workerStallMicroseconds`.
    @Suite struct RunningWorkers {
        /// Sends `count` requests for `path` at once and returns their bodies by index.
        private static func sendAtOnce(_ server: HTTPServer, count: Int, path: (Int) -> String) async throws -> [Int: String] {
            let paths = (0..<count).map(path)
            return try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for (index, path) in paths.enumerated() {
                    group.addTask {
                        let (data, response) = try await fetch(url(server, path))
                        #expect(response.statusCode == 200)
                        return (index, String(decoding: data, as: UTF8.self))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
        }

        /// A server of 16 workers, at most one of them running brief requests.
        private static func limitedServer(stallMicroseconds: Int) throws -> (TestResponder, HTTPServer) {
            let responder = TestResponder()
            let server = try startServer(responder: responder) {
                $0.workerCount = 16; $0.runningWorkerLimit = 1; $0.workerStallMicroseconds = stallMicroseconds
            }
            return (responder, server)
        }

        @Test func briefRequestsWaitForTheRunningWorkerAndOthersDoNot() async throws {
            // A stall far beyond the requests' 60 ms: a sleeping worker still counts as running.
            let (brief, briefServer) = try Self.limitedServer(stallMicroseconds: 10_000_000)
            defer { briefServer.shutdown() }
            let answers = try await Self.sendAtOnce(briefServer, count: 6) { "/sleep?ms=60&brief=1&id=\($0)" }
            #expect(answers == Dictionary(uniqueKeysWithValues: (0..<6).map { ($0, "slept \($0)") }))
            #expect(brief.peakConcurrency == 1)

            let (other, otherServer) = try Self.limitedServer(stallMicroseconds: 10_000_000)
            defer { otherServer.shutdown() }
            _ = try await Self.sendAtOnce(otherServer, count: 6) { "/sleep?ms=300&id=\($0)" }
            #expect(other.peakConcurrency >= 3)
        }

        @Test func aBriefRequestThatBlocksHoldsTheOthersBackOnlyUntilItStalls() async throws {
            // Each request sleeps 300 ms, counted as blocked after 20: the queued ones do not
            // wait for it to come back.
            let (responder, server) = try Self.limitedServer(stallMicroseconds: 20_000)
            defer { server.shutdown() }
            let answers = try await Self.sendAtOnce(server, count: 6) { "/sleep?ms=300&brief=1&id=\($0)" }
            #expect(answers.count == 6)
            #expect(responder.peakConcurrency >= 3)
        }
    }
}
